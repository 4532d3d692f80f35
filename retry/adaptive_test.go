package retry_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/budget"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

func newAdaptive(t *testing.T, ratio, minRate float64, maxWait time.Duration) *budget.Adaptive {
	t.Helper()
	b, err := budget.NewAdaptive(ratio, minRate, maxWait)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Under retry, the budget's wait replaces a shorter backoff and is
// reported as its source.
func TestPacingWaitUnderRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newAdaptive(t, 1, 2, time.Second) // 2 retries/s when quiet
		b.ReserveRetry(t.Context(), time.Hour) // the bucket's one token: the next waits 500ms
		rec := newRecorder()
		cfg := retry.RetryConfig{MaxRetries: 1, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond}
		r := newRetry(t, mock.New(mock.Fail(errTransient), mock.OK("ok")), cfg, append(rec.options(), retry.WithBudget(b))...)
		start := time.Now()
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 500*time.Millisecond {
			t.Errorf("took %v, want the budget's 500ms wait, not the 10ms backoff", got)
		}
		wantAttrs(t, "paced attempt", rec.ended("retry.attempt")[0].Attributes(),
			map[string]string{"retry.backoff.source": "budget", "retry.backoff": "0.5"})
	})
}

// A retry the budget's pace would hold past half of what the caller's
// deadline leaves is decided by what recent retries achieved: where they
// have been succeeding, it goes after that half, within the deadline;
// where they have been failing (the budget then holds first attempts),
// it waits for a turn in the hold after its backoff, each wait at most
// half of what the deadline leaves, and is refused, making no attempt,
// when none comes in time. No call waits into a certain failure.
func TestTheBudgetDecidesUnderTheCallersDeadline(t *testing.T) {
	cfg := retry.RetryConfig{MaxRetries: 1, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond}
	for name, tc := range map[string]struct {
		retriesWork bool
		want        retry.Outcome
		attempts    int
		took        time.Duration
	}{
		"retries have been succeeding": {true, retry.OutcomeSuccess, 2, 25 * time.Millisecond},
		// 10ms of backoff, then waits of 20, 10, 5, 2.5 and 1.25ms: 48.75ms
		"retries have been failing": {false, retry.OutcomeBudgetExhausted, 1, 48750 * time.Microsecond},
	} {
		synctest.Test(t, func(t *testing.T) {
			ctx := t.Context()
			b := newAdaptive(t, 1, 2, time.Second) // 2 retries/s when quiet
			for range 20 {                         // a quorum of retries, all succeeding or all failing, not a herd's
				b.RecordAttempt(ctx, 2, tc.retriesWork)
				time.Sleep(150 * time.Millisecond)
			}
			b.ReserveRetry(ctx, time.Hour)                                // the bucket's one token: the next waits for a refill
			dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond) // shorter than any wait the pace asks here
			defer cancel()
			start := time.Now()
			out, err := newRetry(t, mock.New(mock.Fail(errTransient), mock.OK("ok")), cfg, retry.WithBudget(b)).Invoke(dctx, "q")
			took := time.Since(start)
			if tc.want == retry.OutcomeSuccess {
				if err != nil || out != "ok" || took != tc.took {
					t.Errorf("%s: Invoke() = %v, %v after %v; want ok after %v, half of what the deadline left", name, out, err, took, tc.took)
				}
				return
			}
			wantOutcome(t, err, tc.want, tc.attempts)
			if took != tc.took {
				t.Errorf("%s: took %v, want %v: refused once the deadline left no room for an attempt", name, took, tc.took)
			}
		})
	}
}

// A call with a deadline whose first attempt fails while the provider is
// away, and its retry refused, waits in the budget's hold for as long as
// its deadline allows: when the provider comes back within it, the retry
// goes and the call succeeds, as one that came a moment later would, held.
func TestARefusedRetryWaitsInTheHoldForTheProvidersReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 0.5, 1, time.Second)
		for range 40 { // the provider away: everything fails, first attempts are held
			b.RecordAttempt(ctx, 1, false)
			b.RecordAttempt(ctx, 2, false)
		}
		for range 5 { // the refill of the retries' one token, spent
			b.ReserveRetry(ctx, time.Hour)
		}
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() { // the provider back after 300 ms: what goes succeeds
			time.Sleep(300 * time.Millisecond)
			for range 40 {
				b.RecordAttempt(ctx, 1, true)
			}
		})
		back := time.Now().Add(300 * time.Millisecond)
		provider := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
			if time.Now().Before(back) {
				return nil, errTransient
			}
			return "ok", nil
		})
		// Retries enough for the probes the hold lets through meanwhile,
		// at its rate, which fail.
		cfg := retry.RetryConfig{MaxRetries: 10, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond}
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		start := time.Now()
		out, err := newRetry(t, provider, cfg, retry.WithBudget(b)).Invoke(dctx, "q")
		took := time.Since(start)
		if err != nil || out != "ok" {
			t.Fatalf("Invoke() = %v, %v after %v; want ok once the provider is back", out, err, took)
		}
		if took < 300*time.Millisecond || took > 500*time.Millisecond {
			t.Errorf("took %v, want a little after the provider's return at 300ms", took)
		}
	})
}

type errDown struct{}

func (errDown) Error() string   { return "provider down (503)" }
func (errDown) Retryable() bool { return true }

// In a long outage the retries stay a trickle, second after second, once
// the first failures have shown that retries fail: when the window has
// forgotten them, the missing evidence is made up with the last share
// seen, not presumed to be success. (Before this rule, each second let a
// burst through: 31 % more load in all, at any rate of calls.)
func TestAdaptiveSustainedOutageStaysATrickle(t *testing.T) {
	for _, load := range []int{200, 2000} {
		synctest.Test(t, func(t *testing.T) {
			const seconds = 5
			var retries [seconds + 6]atomic.Int64 // by the second they were made in
			start := time.Now()
			down := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
				if a, _ := retry.AttemptFromContext(ctx); a.Attempt > 1 {
					retries[time.Since(start)/time.Second].Add(1)
				}
				return nil, errDown{}
			})
			r, err := retry.New(down, retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Millisecond,
				MaxBackoff: 10 * time.Millisecond, BackoffFactor: 2, Jitter: 0.2},
				append([]retry.Option{retry.WithBudget(retry.RecommendedBudget())}, quiet...)...)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for range seconds * load {
				wg.Go(func() { _, _ = r.Invoke(context.Background(), nil) })
				time.Sleep(time.Second / time.Duration(load))
			}
			wg.Wait()
			var counts [seconds + 6]int64
			for s := range retries {
				counts[s] = retries[s].Load()
			}
			t.Logf("%d calls a second: retries in each second %v", load, counts)
			// Retries are presumed to work until a quorum of them has
			// failed: a burst of at most a second's pace (ratio 0.5 of the
			// calls) and the bucket's tenth of a second, in the first two
			// seconds (the pace follows the first attempts' rate over a
			// second), which the hold may keep for up to its MaxWait, a
			// second, once the provider fails most attempts (a retry
			// whose turn falls due then waits in the hold). After that,
			// about the floor of one a second is left, however long the
			// outage lasts.
			var first, after int64
			for s, n := range counts {
				if s < 3 {
					first += n
				} else {
					after += n
				}
			}
			if limit := int64(load)*6/10 + 10; first > limit {
				t.Errorf("%d retries in the first three seconds, want at most %d", first, limit)
			}
			if limit := int64(2 * (seconds - 1)); after > limit {
				t.Errorf("%d retries after the first three seconds, want at most %d", after, limit)
			}
		})
	}
}

// errDown is a provider in a total outage.

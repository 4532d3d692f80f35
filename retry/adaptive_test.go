package retry_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

func newAdaptive(t *testing.T, ratio, minRate float64, maxWait time.Duration) *retry.AdaptiveBudget {
	t.Helper()
	b, err := retry.NewAdaptiveBudget(ratio, minRate, maxWait)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// feed records n first attempts and, of retries, ok successes and bad
// failures, spread over d.
func feed(ctx context.Context, b *retry.AdaptiveBudget, d time.Duration, firsts, ok, bad int) {
	step := d / time.Duration(firsts)
	for i := range firsts {
		b.RecordAttempt(ctx, 1, true)
		if i < ok {
			b.RecordAttempt(ctx, 2, true)
		}
		if i < bad {
			b.RecordAttempt(ctx, 2, false)
		}
		time.Sleep(step)
	}
}

// While retries succeed, the rate is ratio of the first attempts'; as they
// fail it falls with their success share, to minPerSecond when none does.
func TestAdaptiveRateFollowsWhatRetriesAchieve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 0.2, 2, time.Second)
		// A second to warm up: in its first, a budget reads the attempts
		// made before its first snapshot as come at once (a herd's).
		feed(ctx, b, time.Second, 1000, 100, 0)
		feed(ctx, b, time.Second, 1000, 100, 0) // 1000 first attempts/s, retries all succeed
		if got := b.Rate(); got < 190 || got > 210 {
			t.Errorf("Rate() = %.1f with working retries, want about 0.2 × 1000/s = 200", got)
		}
		feed(ctx, b, time.Second, 1000, 50, 50) // half the retries fail
		if got := b.Rate(); got < 90 || got > 110 {
			t.Errorf("Rate() = %.1f with half the retries failing, want about 100", got)
		}
		feed(ctx, b, time.Second, 1000, 0, 100) // an outage: every retry fails
		if got := b.Rate(); got != 2 {
			t.Errorf("Rate() = %.1f when no retry works, want minPerSecond, 2", got)
		}
	})
}

// Once the window has forgotten an outage's failed retries, the rate stays
// at the floor until retries succeed again; then each success lifts it,
// and a quorum of them restores the full rate.
func TestAdaptiveRemembersUntilRetriesSpeak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 0.2, 2, time.Second)
		feed(ctx, b, time.Second, 1000, 0, 100) // an outage: every retry fails
		feed(ctx, b, 2*time.Second, 2000, 0, 0) // no retry for two seconds
		if got := b.Rate(); got != 2 {
			t.Errorf("Rate() = %.1f with the failures out of the window, want the floor, 2", got)
		}
		feed(ctx, b, time.Second, 1000, 5, 0) // the provider is back: 5 retries succeed
		if got := b.Rate(); got < 90 || got > 110 {
			t.Errorf("Rate() = %.1f after 5 retries succeeded, want about half of 200", got)
		}
		feed(ctx, b, time.Second, 1000, 20, 0)
		if got := b.Rate(); got < 190 || got > 210 {
			t.Errorf("Rate() = %.1f after a quorum succeeded, want about 200", got)
		}
	})
}

// A retry past the bucket's tokens waits its turn, up to maxWait; beyond
// it, it is refused.
func TestAdaptivePacesThenRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 1, 10, 500*time.Millisecond) // a quiet client: 10 retries/s, a bucket of 1
		if wait, ok := b.ReserveRetry(ctx, time.Hour); !ok || wait != 0 {
			t.Fatalf("first ReserveRetry() = %v, %v, want at once", wait, ok)
		}
		var waits []time.Duration
		for {
			wait, ok := b.ReserveRetry(ctx, time.Hour)
			if !ok {
				break
			}
			waits = append(waits, wait)
		}
		if len(waits) != 5 || waits[0] != 100*time.Millisecond || waits[4] != 500*time.Millisecond {
			t.Errorf("waits = %v, want 100ms apart up to the 500ms maxWait", waits)
		}
		if allowNow(b, ctx) {
			t.Error("ReserveRetry(0) ok with every token reserved")
		}
		time.Sleep(700 * time.Millisecond)
		if !allowNow(b, ctx) {
			t.Error("ReserveRetry(0) refused after the reserved turns passed")
		}
	})
}

// Under retry, the budget's wait replaces a shorter backoff and is
// reported as its source; a wait past the caller's deadline ends the call.
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

		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		b.ReserveRetry(t.Context(), time.Hour)
		_, err := newRetry(t, mock.New(mock.Fail(errTransient)), cfg, retry.WithBudget(b)).Invoke(ctx, "q")
		wantOutcome(t, err, retry.OutcomeDeadline, 1)
	})
}

func TestAdaptiveConcurrent(t *testing.T) {
	b := newAdaptive(t, 0.5, 100, 10*time.Millisecond)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range 2000 {
				b.RecordAttempt(t.Context(), 1+i%2, i%3 != 0)
				b.ReserveRetry(t.Context(), time.Hour)
			}
		})
	}
	wg.Wait()
	if got := b.Rate(); got <= 0 {
		t.Errorf("Rate() = %v, want positive", got)
	}
}

func TestNewAdaptiveBudgetRejectsBadArguments(t *testing.T) {
	for _, args := range []struct {
		ratio, min float64
		wait       time.Duration
	}{{0, 1, time.Second}, {1.5, 1, time.Second}, {0.2, -1, time.Second}, {0.2, 1, 0}} {
		if _, err := retry.NewAdaptiveBudget(args.ratio, args.min, args.wait); err == nil {
			t.Errorf("NewAdaptiveBudget(%v, %v, %v) error = nil", args.ratio, args.min, args.wait)
		}
	}
}

// errDown is a provider in a total outage.
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
			var retries [seconds + 3]atomic.Int64 // by the second they were made in
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
			var counts [seconds + 3]int64
			for s := range retries {
				counts[s] = retries[s].Load()
			}
			t.Logf("%d calls a second: retries in each second %v", load, counts)
			// Retries are presumed to work until a quorum of them has
			// failed: a burst of at most a second's pace (ratio 0.5 of the
			// calls) and the bucket's tenth of a second, in the first two
			// seconds (the pace follows the first attempts' rate over a
			// second). After that, about the floor of one a second is
			// left, however long the outage lasts.
			var first, after int64
			for s, n := range counts {
				if s < 2 {
					first += n
				} else {
					after += n
				}
			}
			if limit := int64(load)*6/10 + 10; first > limit {
				t.Errorf("%d retries in the first two seconds, want at most %d", first, limit)
			}
			if limit := int64(2 * (seconds - 1)); after > limit {
				t.Errorf("%d retries after the first two seconds, want at most %d", after, limit)
			}
		})
	}
}

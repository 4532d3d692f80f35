package retry_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

// throttling refuses every first attempt, and records what it is told.
type throttling struct {
	recorded []bool
}

func (b *throttling) Reserve(_ context.Context, n int, _ time.Duration) core.Reservation {
	return core.Reservation{OK: n > 1}
}
func (b *throttling) RecordAttempt(_ context.Context, _ int, accepted bool) {
	b.recorded = append(b.recorded, accepted)
}
func (b *throttling) Throttle() float64 { return 1 }

// A first attempt the budget throttles is never sent, by Invoke, Stream or
// Batch: the call ends with no attempt, outcome budget_exhausted and
// error.type budget_throttled, a Local refusal that fallback moves on
// from; nothing is recorded, the refusal is counted by reason, and the
// budget's throttle is a gauge.
func TestAThrottledFirstAttemptIsNeverSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &throttling{}
		inner := mock.New(mock.OK("never"))
		rec := newRecorder()
		r := newRetry(t, inner, testConfig(), append(rec.options(), retry.WithBudget(b))...)
		_, err := r.Invoke(t.Context(), "q", core.WithOperation("llm"))
		re := wantOutcome(t, err, retry.OutcomeBudgetExhausted, 0)
		if got := retry.ErrorType(re); got != "budget_throttled" {
			t.Errorf("error.type = %q, want budget_throttled", got)
		}
		if l, ok := errors.AsType[interface {
			error
			Local() bool
		}](err); !ok || !l.Local() {
			t.Errorf("error %v is not a Local refusal", err)
		}
		if !fallback.CannotServe(err) {
			t.Errorf("fallback.CannotServe(%v) = false, want a move to the next candidate", err)
		}
		if _, err := r.Stream(t.Context(), "q"); err == nil {
			t.Error("Stream() created a stream past a throttled first attempt")
		} else {
			wantOutcome(t, err, retry.OutcomeBudgetExhausted, 0)
		}
		outs, err := r.Batch(t.Context(), []any{"a", "b"})
		be, ok := errors.AsType[*core.BatchError](err)
		if !ok || len(be.Errs) != 2 || outs != nil && outs[0] != nil {
			t.Fatalf("Batch() = %v, %v, want every item refused", outs, err)
		}
		for i, ie := range be.Errs {
			if !fallback.CannotServe(ie) || retry.ErrorType(ie) != "budget_throttled" {
				t.Errorf("item %d: %v, want a Local budget_throttled refusal", i, ie)
			}
		}
		if n := inner.CallCount(); n != 0 || len(b.recorded) != 0 {
			t.Errorf("%d inner calls, %d answers recorded; want none", n, len(b.recorded))
		}
		m := rec.points(t)
		if got := m["retry.budget.refused"]["reason=throttled,retry.method=invoke,retry.operation=llm"]; got != "1" {
			t.Errorf("retry.budget.refused = %v, want 1 throttled Invoke", m["retry.budget.refused"])
		}
		if got := m["retry.budget.throttle"][""]; got != "1.000" {
			t.Errorf("retry.budget.throttle = %v, want 1", m["retry.budget.throttle"])
		}
	})
}

// localErr is a refusal made on this side of the wire, retryable.
type localErr struct{}

func (localErr) Error() string   { return "limiter: refused" }
func (localErr) Local() bool     { return true }
func (localErr) Retryable() bool { return true }

// The budget is told of every answer the provider gave (a retryable
// failure as refused; a 400, which no retry mends, as accepted; a
// success), and of nothing that happened on this side of the wire.
func TestTheBudgetCountsAnswersOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			script []mock.Result
			want   []bool
		}{
			{"a 503 then a success", []mock.Result{mock.Fail(&mock.HTTPError{Code: 503}), mock.OK("ok")}, []bool{false, true}},
			{"a 400", []mock.Result{mock.Fail(&mock.HTTPError{Code: 400})}, []bool{true}},
			{"a local refusal then a success", []mock.Result{mock.Fail(localErr{}), mock.OK("ok")}, []bool{true}},
			{"an error with no status", []mock.Result{mock.Fail(retry.Permanent(errors.New("bad input")))}, nil},
		} {
			b := &countingFirsts{}
			_, _ = newRetry(t, mock.New(tc.script...), testConfig(), retry.WithBudget(b)).Invoke(t.Context(), "q")
			if !slices.Equal(b.recorded, tc.want) {
				t.Errorf("%s: recorded %v, want %v", tc.name, b.recorded, tc.want)
			}
		}
	})
}

// countingFirsts lets everything go and records what it is told.
type countingFirsts struct{ recorded []bool }

func (b *countingFirsts) Reserve(context.Context, int, time.Duration) core.Reservation {
	return core.Reservation{OK: true}
}
func (b *countingFirsts) RecordAttempt(_ context.Context, _ int, accepted bool) {
	b.recorded = append(b.recorded, accepted)
}

// Through the recommended budget, a provider that refuses nearly
// everything is soon sent a fraction of its callers' load, and all of it
// again within a second of its return.
func TestRecommendedBudgetThrottlesACollapseAndLetsGoAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var (
			sentMu sync.Mutex
			sent   [7]int // per second
		)
		provider := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
			at := time.Since(start)
			sentMu.Lock()
			sent[at/time.Second]++
			n := sent[at/time.Second]
			sentMu.Unlock()
			if at >= time.Second && at < 4*time.Second && n%10 != 0 {
				return nil, &mock.HTTPError{Code: 503} // collapsed: one in ten served
			}
			return "ok", nil
		})
		cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 80 * time.Millisecond}
		r := newRetry(t, provider, cfg, retry.WithBudget(retry.RecommendedBudget()))
		var (
			mu        sync.Mutex
			throttled [6]int
			wg        sync.WaitGroup
		)
		for i := range 6000 { // 1000 calls a second for 6 s
			wg.Go(func() {
				_, err := r.Invoke(t.Context(), "q")
				if re, ok := errors.AsType[*retry.Error](err); ok && re.Attempts == 0 {
					mu.Lock()
					throttled[i/1000]++
					mu.Unlock()
				}
			})
			time.Sleep(time.Until(start.Add(time.Duration(i+1) * time.Millisecond)))
		}
		wg.Wait()
		t.Logf("sent per second %v, throttled per second %v", sent, throttled)
		if sent[3] > 600 || throttled[3] < 400 {
			t.Errorf("in the collapse's third second %d attempts sent, %d calls throttled; want the load cut", sent[3], throttled[3])
		}
		if throttled[5] != 0 || sent[5] < 1000 {
			t.Errorf("a second after the return %d calls throttled, %d attempts sent; want none throttled", throttled[5], sent[5])
		}
	})
}

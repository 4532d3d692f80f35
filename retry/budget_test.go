package retry_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

// provider is a simulated provider that is either down (503) or up.
type provider struct {
	down  atomic.Bool
	calls atomic.Int64
}

func (p *provider) Invoke(context.Context, any, ...core.Option) (any, error) {
	p.calls.Add(1)
	if p.down.Load() {
		return nil, &mock.HTTPError{Code: 503}
	}
	return "ok", nil
}
func (p *provider) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(p.Invoke).Batch(ctx, in, opts...)
}
func (p *provider) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(p.Invoke).Stream(ctx, in, opts...)
}

func TestBudgetUnderTotalOutageAndRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &provider{}
		p.down.Store(true)
		budget := retry.NewTokenBudget(10, 0.1)
		// Several RetryRunnables share one budget, as the clients of one
		// provider would.
		rs := make([]*retry.RetryRunnable, 4)
		for i := range rs {
			rs[i] = newRetry(t, p, testConfig(), retry.WithBudget(budget))
		}
		var wg sync.WaitGroup
		var refused atomic.Int64
		for i := range 200 {
			wg.Go(func() {
				_, err := rs[i%4].Invoke(t.Context(), i)
				if re, ok := errors.AsType[*retry.Error](err); ok && re.Outcome == retry.OutcomeBudgetExhausted {
					refused.Add(1)
				}
			})
		}
		wg.Wait()
		perCall := float64(p.calls.Load()) / 200
		if perCall > 1.2 {
			t.Errorf("attempts per call during the outage = %.2f, want at most 1.2", perCall)
		}
		if refused.Load() == 0 {
			t.Error("no call ended with budget_exhausted")
		}

		// Recovery: successes refund 0.1 token each. After 70 the budget
		// holds 7 tokens; a failure costs one, leaving 6, above half of 10:
		// the retry is allowed again.
		p.down.Store(false)
		for range 70 {
			if _, err := rs[0].Invoke(t.Context(), "q"); err != nil {
				t.Fatal(err)
			}
		}
		flaky := mock.New(mock.Fail(errTransient), mock.OK("ok"))
		r := newRetry(t, flaky, testConfig(), retry.WithBudget(budget))
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Errorf("after recovery: Invoke() error = %v, want a successful retry", err)
		}
	})
}

func TestTokenBudgetArithmetic(t *testing.T) {
	ctx := context.Background()
	b := retry.NewTokenBudget(4, 0.5)
	steps := []struct {
		success bool
		tokens  float64
		allow   bool
	}{
		{false, 3, true}, {false, 2, false}, {true, 2.5, true}, {false, 1.5, false},
		{false, 0.5, false}, {false, 0, false}, {false, 0, false}, // never below zero
		{true, 0.5, false}, {true, 1, false}, {true, 1.5, false}, {true, 2, false}, {true, 2.5, true},
	}
	for i, s := range steps {
		b.RecordAttempt(ctx, 1, s.success)
		if got := b.Tokens(); got != s.tokens {
			t.Errorf("step %d: Tokens() = %v, want %v", i, got, s.tokens)
		}
		if got := allowNow(b, ctx); got != s.allow {
			t.Errorf("step %d: Reserve(retry, 0) ok = %v, want %v", i, got, s.allow)
		}
	}
	for range 100 {
		b.RecordAttempt(ctx, 1, true)
	}
	if got := b.Tokens(); got != 4 {
		t.Errorf("Tokens() after many successes = %v, want the maximum 4", got)
	}
}

func TestTokenBudgetConcurrent(t *testing.T) {
	ctx := context.Background()
	b := retry.NewTokenBudget(1000, 0.5)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 10 {
				b.RecordAttempt(ctx, 1, false)
				_ = allowNow(b, ctx)
			}
		})
	}
	wg.Wait()
	if got := b.Tokens(); got != 500 {
		t.Fatalf("Tokens() after 500 concurrent failures = %v, want 500", got)
	}
	for range 20 {
		wg.Go(func() {
			for range 10 {
				b.RecordAttempt(ctx, 1, true)
			}
		})
	}
	wg.Wait()
	if got := b.Tokens(); got != 600 {
		t.Errorf("Tokens() after 200 concurrent successes = %v, want 600", got)
	}
}

func TestNewTokenBudgetRejectsBadArguments(t *testing.T) {
	// 0.0005 rounds to nothing at the budget's resolution: a budget that
	// never allows a retry, or a ratio that never refunds.
	for _, args := range [][2]float64{{0, 0.1}, {-1, 0.1}, {10, -0.1}, {0.0005, 2}, {10, 0.0005}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewTokenBudget(%v, %v) did not panic", args[0], args[1])
				}
			}()
			retry.NewTokenBudget(args[0], args[1])
		}()
	}
}

func TestBudgetRefusalIsCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		budget := retry.NewTokenBudget(2, 0.1) // one failure leaves 1 token: at half, refused
		r := newRetry(t, mock.New(mock.Fail(errTransient)), testConfig(), append(rec.options(), retry.WithBudget(budget))...)
		_, err := r.Invoke(t.Context(), "q", core.WithOperation("llm"))
		wantOutcome(t, err, retry.OutcomeBudgetExhausted, 1)
		m := rec.points(t)
		if got := m["retry.budget.refused"]["reason=retry_budget,retry.method=invoke,retry.operation=llm"]; got != "1" {
			t.Errorf("retry.budget.refused = %v, want 1", m["retry.budget.refused"])
		}
		wantAttrs(t, "call span", rec.one(t, "retry.invoke").Attributes(), map[string]string{"retry.outcome": "budget_exhausted"})
	})
}

func TestBatchItemsDrawOnTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget := retry.NewTokenBudget(10, 0.1)
		inner := mock.New(mock.Fail(errTransient))
		r := newRetry(t, inner, testConfig(), retry.WithBudget(budget))
		start := time.Now()
		_, err := r.Batch(t.Context(), batchInputs(8))
		be, ok := errors.AsType[*core.BatchError](err)
		if !ok {
			t.Fatalf("Batch() error = %v", err)
		}
		// Round 1: 8 failures leave 2 tokens: every retry is refused.
		for _, e := range be.Errs {
			wantOutcome(t, e, retry.OutcomeBudgetExhausted, 1)
		}
		if inner.CallCount() != 1 || time.Since(start) != 0 {
			t.Errorf("inner calls = %d after %v, want 1 call and no backoff", inner.CallCount(), time.Since(start))
		}
	})
}

func TestWholeBatchFailureIsChargedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget := retry.NewTokenBudget(10, 0.1)
		inner := mock.New().FailBatch(&mock.HTTPError{Code: 503})
		r := newRetry(t, inner, testConfig(), retry.WithBudget(budget))
		outs, err := r.Batch(t.Context(), batchInputs(8))
		if err != nil || len(outs) != 8 {
			t.Fatalf("Batch() = %v, %v, want all 8 after one retry", outs, err)
		}
		// One failed call (-1), then 8 successes (+0.8).
		if got := budget.Tokens(); got < 9.79 || got > 9.81 {
			t.Errorf("Tokens() = %v, want 9.8: the whole-batch failure costs one token", got)
		}
	})
}

func TestNewTokenBudgetSmallestValues(t *testing.T) {
	b := retry.NewTokenBudget(0.001, 0.001)
	if got := b.Tokens(); got != 0.001 {
		t.Errorf("Tokens() = %v, want 0.001", got)
	}
	if !allowNow(b, t.Context()) {
		t.Error("a full budget of 0.001 tokens refuses a retry")
	}
}

// allowNow asks b for a retry that may not wait.
func allowNow(b retry.Budget, ctx context.Context) bool {
	_, ok := turn(b.Reserve(ctx, 2, 0))
	return ok
}

// turn is a budget's reservation as its delay and whether it is OK.
func turn(res core.Reservation) (time.Duration, bool) { return res.Delay, res.OK }

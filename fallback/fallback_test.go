package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = []fallback.Option{fallback.WithTracerProvider(tnoop.NewTracerProvider()), fallback.WithMeterProvider(noop.NewMeterProvider())}

func newFallback(t *testing.T, candidates []core.Runnable, opts ...fallback.Option) *fallback.Runnable {
	t.Helper()
	r, err := fallback.New(candidates, append(slices.Clone(quiet), opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// withRetry wraps a model in a RetryRunnable of 2 attempts.
func withRetry(t *testing.T, name string, model core.Runnable) core.Runnable {
	t.Helper()
	cfg := retry.RetryConfig{MaxRetries: 1, InitialBackoff: time.Second, MaxBackoff: time.Second}
	r, err := retry.New(mock.Named(name, model), cfg, retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	err503      = &mock.HTTPError{Code: 503, Msg: "overloaded"}
	err400      = &mock.HTTPError{Code: 400, Msg: "bad request"}
	errLongWait = &mock.HTTPError{Code: 429, After: time.Hour, Msg: "quota"}
)

// typedError names its own error.type, as the provider adapters' errors do.
type typedError struct{ typ string }

func (e typedError) Error() string     { return e.typ }
func (e typedError) ErrorType() string { return e.typ }
func (e typedError) Retryable() bool   { return false }

// localError is a refusal made on this side of the wire (an open circuit).
type localError struct{}

func (localError) Error() string   { return "circuit open" }
func (localError) Local() bool     { return true }
func (localError) Retryable() bool { return false }

func TestInvokeMovesOnWhenACandidateCannotServe(t *testing.T) {
	for name, failure := range map[string]mock.Result{
		"exhausted":            mock.Fail(err503),
		"retry_after_too_long": mock.Fail(errLongWait),
		"open circuit":         mock.Fail(localError{}),
		// Not retried, yet a model with a larger window may serve it.
		"context_length_exceeded": mock.Fail(retry.Permanent(typedError{"context_length_exceeded"})),
		"overflow message": mock.Fail(retry.Permanent(errors.New(
			"This model's maximum context length is 128000 tokens. However, you requested 130000 tokens (126000 in the messages, 4000 in the completion)."))),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, b := mock.New(failure), mock.New(mock.OK("from b"))
				r := newFallback(t, []core.Runnable{withRetry(t, "a", a), withRetry(t, "b", b)})
				out, err := r.Invoke(t.Context(), "q")
				if err != nil || out != "from b" {
					t.Fatalf("Invoke() = %v, %v, want b's answer", out, err)
				}
			})
		})
	}
}

func TestInvokeStopsOnAFailureNoCandidateFixes(t *testing.T) {
	a, b := mock.New(mock.Fail(err400)), mock.New(mock.OK("from b"))
	r := newFallback(t, []core.Runnable{withRetry(t, "a", a), withRetry(t, "b", b)})
	_, err := r.Invoke(t.Context(), "q")
	if !errors.Is(err, err400) || b.CallCount() != 0 {
		t.Errorf("Invoke() error = %v with %d calls to b, want a's 400 and no call to b", err, b.CallCount())
	}
}

func TestSwitchOnNamedErrorTypes(t *testing.T) {
	long := typedError{"context_length_exceeded"}
	a, b := mock.New(mock.Fail(long)), mock.New(mock.OK("from b"))
	r := newFallback(t, []core.Runnable{a, b}, fallback.WithSwitchOn("context_length_exceeded"))
	if out, err := r.Invoke(t.Context(), "q"); err != nil || out != "from b" {
		t.Errorf("Invoke() = %v, %v, want b's answer", out, err)
	}
	// WithSwitchIf replaces the rule.
	never := newFallback(t, []core.Runnable{mock.New(mock.Fail(localError{})), b}, fallback.WithSwitchIf(func(error) bool { return false }))
	if _, err := never.Invoke(t.Context(), "q"); !errors.As(err, new(localError)) {
		t.Errorf("Invoke() error = %v, want a's failure: the rule never switches", err)
	}
}

func TestFinalErrorNamesEveryCandidate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errA, errB := &mock.HTTPError{Code: 503, Msg: "a down"}, &mock.HTTPError{Code: 529, Msg: "b down"}
		r := newFallback(t, []core.Runnable{withRetry(t, "a", mock.New(mock.Fail(errA))), withRetry(t, "b", mock.New(mock.Fail(errB)))})
		_, err := r.Invoke(t.Context(), "q")
		fe, ok := errors.AsType[*fallback.Error](err)
		if !ok || len(fe.Errs) != 2 || !errors.Is(err, errA) || !errors.Is(err, errB) {
			t.Fatalf("Invoke() error = %v, want a *fallback.Error reaching both failures", err)
		}
		if !slices.Equal(fe.Names, []string{"a", "b"}) {
			t.Errorf("Names = %v, want [a b]", fe.Names)
		}
		want := "fallback: 2 candidate(s) failed; [0 a] retry: a: exhausted after 2 attempts: a down (503); [1 b] retry: b: exhausted after 2 attempts: b down (529)"
		if err.Error() != want {
			t.Errorf("Error() = %q, want %q", err, want)
		}
	})
}

// The caller's cancellation or deadline never moves the call on; a
// candidate that stops early for the deadline, while the caller's
// context is live, does: the next may answer in time.
func TestCallerContextNeverMovesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mock.New(mock.OK("from b"))
		slow := withRetry(t, "a", mock.New(mock.Result{Delay: time.Hour}))
		r := newFallback(t, []core.Runnable{slow, b})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := r.Invoke(ctx, "q")
		if !errors.Is(err, context.DeadlineExceeded) || b.CallCount() != 0 {
			t.Errorf("Invoke() error = %v with %d calls to b, want the deadline and no call to b", err, b.CallCount())
		}
		// A retry layer that stops early because its backoff would pass
		// the deadline leaves the caller time: the next candidate answers.
		early := withRetry(t, "a", mock.New(mock.Fail(err503)))
		r = newFallback(t, []core.Runnable{early, b})
		ctx, cancel = context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		if out, err := r.Invoke(ctx, "q"); err != nil || out != "from b" || b.CallCount() != 1 || time.Since(start) != 0 {
			t.Errorf("Invoke() = %v, %v with %d calls to b after %v, want b's answer at once", out, err, b.CallCount(), time.Since(start))
		}
	})
}

func TestWithInputTranslatesPerCandidate(t *testing.T) {
	a, b := mock.New(mock.Fail(localError{})), mock.New()
	r := newFallback(t, []core.Runnable{a, b}, fallback.WithInput(func(i int, in any) any {
		if i == 1 {
			return "anthropic:" + in.(string)
		}
		return in
	}))
	out, err := r.Invoke(t.Context(), "q")
	if err != nil || out != "anthropic:q" || a.Calls()[0].Input != "q" {
		t.Errorf("Invoke() = %v, %v (a got %v), want each candidate its own input", out, err, a.Calls()[0].Input)
	}
}

func TestBatchSendsOnlyFailedItemsOn(t *testing.T) {
	a := mock.New().ForInput("y", mock.Fail(localError{})).ForInput("z", mock.Fail(err400))
	b := mock.New()
	r := newFallback(t, []core.Runnable{a, b}, fallback.WithInput(func(i int, in any) any {
		if i == 1 {
			return "b:" + in.(string)
		}
		return in
	}))
	outs, err := r.Batch(t.Context(), []any{"x", "y", "z"})
	if !slices.Equal(outs, []any{"x", "b:y", nil}) {
		t.Errorf("outputs = %v, want [x b:y <nil>] merged by index", outs)
	}
	be, ok := errors.AsType[*core.BatchError](err)
	if !ok || be.Errs[0] != nil || be.Errs[1] != nil || !errors.Is(be.Errs[2], err400) {
		t.Fatalf("Batch() error = %v, want only z failed, with a's 400", err)
	}
	if _, ok := errors.AsType[*fallback.Error](be.Errs[2]); !ok {
		t.Errorf("item error = %v, want a *fallback.Error", be.Errs[2])
	}
	if calls := b.Calls(); len(calls) != 1 || !slices.Equal(calls[0].Inputs, []any{"b:y"}) {
		t.Errorf("b was sent %v, want only [b:y]", calls)
	}
}

func TestBatchWholeFailureMovesEveryItem(t *testing.T) {
	a := mock.New().FailBatch(localError{})
	b := mock.New()
	r := newFallback(t, []core.Runnable{a, b})
	if outs, err := r.Batch(t.Context(), []any{1, 2}); err != nil || !slices.Equal(outs, []any{1, 2}) {
		t.Errorf("Batch() = %v, %v, want b's [1 2]", outs, err)
	}
}

func TestNewRejectsBadCandidates(t *testing.T) {
	if _, err := fallback.New(nil); err == nil {
		t.Error("New(nil) error = nil")
	}
	if _, err := fallback.New([]core.Runnable{mock.New(), nil}); err == nil {
		t.Error("New with a nil candidate: error = nil")
	}
}

// timeoutRetry wraps a model in a RetryRunnable whose attempts get 1s for
// their first chunk, and 2 attempts.
func timeoutRetry(t *testing.T, name string, model core.Runnable) core.Runnable {
	t.Helper()
	cfg := retry.RetryConfig{MaxRetries: 1, InitialBackoff: time.Second, MaxBackoff: time.Second, FirstChunkTimeout: time.Second}
	r, err := retry.New(mock.Named(name, model), cfg, retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// CannotServe answers for every outcome of a retry layer's error: the
// outcomes that give up on the route move on, the caller's cancellation
// and the failures another candidate does not mend do not.
func TestCannotServeReadsEveryRetryOutcome(t *testing.T) {
	cause := errors.New("upstream said no")
	for outcome, want := range map[retry.Outcome]bool{
		retry.OutcomeExhausted:            true,
		retry.OutcomeBudgetExhausted:      true,
		retry.OutcomeRetryAfterTooLong:    true,
		retry.OutcomeSilentTimeout:        true,
		retry.OutcomeDeadline:             true, // the fallback asks next whether the caller's context is live
		retry.OutcomeCanceled:             false,
		retry.OutcomeNotRetryable:         false,
		retry.OutcomeCommitted:            false,
		retry.OutcomeHandedOff:            false,
		retry.OutcomeRetryTokensExhausted: false,
	} {
		e := &retry.Error{Outcome: outcome, Attempts: 2, Err: cause}
		switch outcome {
		case retry.OutcomeCanceled:
			e.ContextErr = context.Canceled
		case retry.OutcomeDeadline:
			e.ContextErr = context.DeadlineExceeded
		}
		if got := fallback.CannotServe(e); got != want {
			t.Errorf("CannotServe(a *retry.Error with outcome %s) = %v, want %v", outcome, got, want)
		}
		if got := fallback.CannotServe(fmt.Errorf("wrapped: %w", e)); got != want {
			t.Errorf("CannotServe(a wrapped *retry.Error with outcome %s) = %v, want %v", outcome, got, want)
		}
	}
	// A retry layer that ran out says so whatever its last attempt's error
	// holds: an attempt it cancelled to move on ends in context.Canceled.
	if !fallback.CannotServe(&retry.Error{Outcome: retry.OutcomeExhausted, Attempts: 3, Err: fmt.Errorf("attempt 3: %w", context.Canceled)}) {
		t.Error("CannotServe(an exhausted call whose last attempt was cancelled by the retry layer) = false, want true")
	}
	// The cancellation wins over a cause that would move on by itself.
	if fallback.CannotServe(&retry.Error{Outcome: retry.OutcomeCanceled, Err: localError{}, ContextErr: context.Canceled}) {
		t.Error("CannotServe(a cancelled call whose last attempt was refused locally) = true, want false: the caller's own")
	}
}

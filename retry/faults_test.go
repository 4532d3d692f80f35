package retry_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

// An inner Batch that returns a typed-nil *core.BatchError gave a
// malformed answer: not retried, never a nil dereference.
func TestBatchTypedNilBatchError(t *testing.T) {
	inner := funcs{batch: func(_ context.Context, ins []any) ([]any, error) {
		var be *core.BatchError
		return make([]any, len(ins)), be
	}}
	_, err := newRetry(t, inner, testConfig()).Batch(t.Context(), []any{1, 2})
	be, ok := errors.AsType[*core.BatchError](err)
	if !ok || be == nil || len(be.Errs) != 2 {
		t.Fatalf("Batch() error = %v, want a *core.BatchError of 2 items", err)
	}
	for i, e := range be.Errs {
		wantOutcome(t, e, retry.OutcomeNotRetryable, 1)
		if i == 0 && e.Error() == "" {
			t.Error("empty message")
		}
	}
}

// Each round is sent a fresh slice of the caller's original values: an
// inner Batch that writes to its inputs changes neither the caller's slice
// nor what a later round re-sends.
func TestBatchRoundsResendOriginalInputs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent [][]any
		inner := funcs{batch: func(_ context.Context, ins []any) ([]any, error) {
			sent = append(sent, slices.Clone(ins))
			errs := make([]error, len(ins))
			if len(sent) == 1 {
				errs[1] = errTransient
			}
			for i := range ins {
				ins[i] = "scribbled"
			}
			return make([]any, len(ins)), &core.BatchError{Errs: errs}
		}}
		inputs := []any{"a", "b", "c"}
		if _, err := newRetry(t, inner, testConfig()).Batch(t.Context(), inputs); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(inputs, []any{"a", "b", "c"}) {
			t.Errorf("caller's inputs = %v, want them untouched", inputs)
		}
		if len(sent) != 2 || !slices.Equal(sent[1], []any{"b"}) {
			t.Errorf("rounds sent %v, want the original [b] re-sent", sent)
		}
	})
}

// cancelOnAttemptEnd is a span processor that cancels the caller's
// context when an attempt span ends: between the decision to stop for the
// deadline and the building of the error.
type cancelOnAttemptEnd struct {
	sdktrace.SpanProcessor
	cancel context.CancelFunc
}

func (p cancelOnAttemptEnd) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.Name() == "retry.attempt" {
		p.cancel()
	}
}

// wantDeadline checks that a deadline stop says deadline through and
// through: outcome and context error agree.
func wantDeadline(t *testing.T, err error) {
	t.Helper()
	re := wantOutcome(t, err, retry.OutcomeDeadline, 1)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || re.ContextErr != context.DeadlineExceeded {
		t.Errorf("error = %v (ContextErr %v), want it to match DeadlineExceeded and not Canceled", err, re.ContextErr)
	}
}

// deadlineThenCancel returns a context whose deadline is shorter than the
// first backoff, and a tracer option that cancels it when the first
// attempt's span ends.
func deadlineThenCancel(t *testing.T) (context.Context, retry.Option) {
	ctx, cancelDeadline := context.WithTimeout(t.Context(), 500*time.Millisecond)
	t.Cleanup(cancelDeadline)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	rec := newRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(cancelOnAttemptEnd{rec.spans, cancel}))
	return ctx, retry.WithTracerProvider(tp)
}

func TestDeadlineStopAgreesWithContextErr(t *testing.T) {
	t.Run("invoke", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, tp := deadlineThenCancel(t)
			_, err := newRetry(t, mock.New(mock.Fail(errTransient)), testConfig(), tp).Invoke(ctx, "q")
			wantDeadline(t, err)
		})
	})
	t.Run("batch item", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, tp := deadlineThenCancel(t)
			inner := mock.New().ForInput(2, mock.Fail(errTransient))
			_, err := newRetry(t, inner, testConfig(), tp).Batch(ctx, []any{1, 2})
			be, ok := errors.AsType[*core.BatchError](err)
			if !ok {
				t.Fatalf("Batch() error = %v, want a *core.BatchError", err)
			}
			wantDeadline(t, be.Errs[1])
		})
	})
	t.Run("stream creation", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, tp := deadlineThenCancel(t)
			_, err := newRetry(t, mock.New(mock.Fail(errTransient)), testConfig(), tp).Stream(ctx, "q")
			wantDeadline(t, err)
		})
	})
	t.Run("stream value", func(t *testing.T) {
		// Once the caller cancels, the forwarder may deliver the lone error
		// or just close (the Stream contract lets it stop): try until one
		// is delivered, and check every one that is.
		delivered := 0
		for range 40 {
			synctest.Test(t, func(t *testing.T) {
				ctx, tp := deadlineThenCancel(t)
				ch, err := newRetry(t, mock.New(mock.Stream(errTransient)), testConfig(), tp).Stream(ctx, "q")
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range mock.Drain(ch) {
					delivered++
					wantDeadline(t, v.(error))
				}
			})
		}
		if delivered == 0 {
			t.Error("no stream delivered its lone error in 40 tries")
		}
	})
}

// An abandoned stream attempt is cancelled with a cause of its own, so a
// decorator inside tells it from the caller's cancellation.
func TestAbandonedStreamAttemptHasACause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.FirstChunkTimeout = time.Second
		inner := mock.New(mock.Stream(errTransient), mock.Result{Delay: time.Hour}, mock.Stream(nil, "ok"))
		ch, err := newRetry(t, inner, cfg).Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if got := mock.Drain(ch); !slices.Equal(got, []any{"ok"}) {
			t.Fatalf("values = %v, want [ok]", got)
		}
		calls := inner.Calls()
		for i, want := range []error{errTransient, retry.ErrAttemptTimeout} {
			cause := context.Cause(calls[i].Ctx)
			if !errors.Is(cause, retry.ErrAttemptAbandoned) || !errors.Is(cause, want) {
				t.Errorf("attempt %d: cause = %v, want ErrAttemptAbandoned and %v", i+1, cause, want)
			}
		}
	})
}

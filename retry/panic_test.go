package retry_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/codes"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

var errBoom = errors.New("boom")

// funcs is a Runnable made of functions; a nil one panics.
type funcs struct {
	invoke func(ctx context.Context, in any) (any, error)
	batch  func(ctx context.Context, ins []any) ([]any, error)
	stream func(ctx context.Context, in any) (<-chan any, error)
}

func (f funcs) Invoke(ctx context.Context, in any, _ ...core.Option) (any, error) {
	return f.invoke(ctx, in)
}
func (f funcs) Batch(ctx context.Context, ins []any, _ ...core.Option) ([]any, error) {
	return f.batch(ctx, ins)
}
func (f funcs) Stream(ctx context.Context, in any, _ ...core.Option) (<-chan any, error) {
	return f.stream(ctx, in)
}

// catch runs f and returns what it panicked with.
func catch(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// wantEndedCall checks that the call span and every attempt span ended,
// the call span with status Error and error.type panic.
func wantEndedCall(t *testing.T, rec *recorder, name string, attempts int) {
	t.Helper()
	call := rec.one(t, name)
	if call.Status().Code != codes.Error {
		t.Errorf("%s status = %v, want Error", name, call.Status())
	}
	wantAttrs(t, name, call.Attributes(), map[string]string{"error.type": "panic"})
	if got := len(rec.ended("retry.attempt")); got != attempts {
		t.Errorf("ended attempt spans = %d, want %d", got, attempts)
	}
	if started, ended := len(rec.spans.Started()), len(rec.spans.Ended()); started != ended {
		t.Errorf("spans started, ended = %d, %d, want all ended", started, ended)
	}
}

// On the caller's goroutine a panic propagates unchanged, and the spans
// of the call it cut short are ended.
func TestInvokePanicPropagatesWithSpansEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		calls := 0
		inner := funcs{invoke: func(context.Context, any) (any, error) {
			calls++
			if calls == 2 {
				panic(errBoom)
			}
			return nil, errTransient
		}}
		cfg := testConfig()
		cfg.PerAttemptTimeout = time.Minute
		r := newRetry(t, inner, cfg, rec.options()...)
		if v := catch(func() { _, _ = r.Invoke(t.Context(), "q") }); v != errBoom {
			t.Fatalf("recovered %v, want the inner panic's value unchanged", v)
		}
		wantEndedCall(t, rec, "retry.invoke", 2)
		if got := rec.points(t)["retry.calls"]; len(got) != 1 {
			t.Errorf("retry.calls = %v, want the panicked call counted once", got)
		}
	})
}

func TestBatchPanicPropagatesWithSpansEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		inner := funcs{batch: func(context.Context, []any) ([]any, error) { panic(errBoom) }}
		r := newRetry(t, inner, testConfig(), rec.options()...)
		if v := catch(func() { _, _ = r.Batch(t.Context(), []any{1, 2}) }); v != errBoom {
			t.Fatalf("recovered %v, want errBoom", v)
		}
		wantEndedCall(t, rec, "retry.batch", 1)
	})
}

func TestStreamCreationPanicOnCallerPropagates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		inner := funcs{stream: func(context.Context, any) (<-chan any, error) { panic(errBoom) }}
		r := newRetry(t, inner, testConfig(), rec.options()...)
		if v := catch(func() { _, _ = r.Stream(t.Context(), "q") }); v != errBoom {
			t.Fatalf("recovered %v, want errBoom", v)
		}
		wantEndedCall(t, rec, "retry.stream", 1)
	})
}

// A hook that panics on the caller's goroutine panics the call, with its
// spans ended.
func TestOnRetryPanicOnCallerPropagates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		hook := retry.WithOnRetry(func(context.Context, retry.RetryEvent) { panic("hook") })
		r := newRetry(t, mock.New(mock.Fail(errTransient)), testConfig(), append(rec.options(), hook)...)
		if v := catch(func() { _, _ = r.Invoke(t.Context(), "q") }); v != "hook" {
			t.Fatalf("recovered %v, want the hook's panic", v)
		}
		wantEndedCall(t, rec, "retry.invoke", 1)
	})
}

// streamThenPanic is a Runnable whose first Stream yields an error value
// before any chunk, so the retry happens on the forwarding goroutine, and
// whose second Stream panics there.
func streamThenPanic() core.Runnable {
	var calls atomic.Int32
	return funcs{stream: func(ctx context.Context, _ any) (<-chan any, error) {
		if calls.Add(1) == 2 {
			panic(errBoom)
		}
		return mock.New(mock.Stream(errTransient)).Stream(ctx, "q")
	}}
}

// wantPanicValue drains ch and checks that its only value is an *Error
// wrapping a *core.PanicError of want, with the stack of panicking.
func wantPanicValue(t *testing.T, ch <-chan any, want any, panicking string) {
	t.Helper()
	got := mock.Drain(ch)
	if len(got) != 1 {
		t.Fatalf("values = %v, want one error", got)
	}
	err, _ := got[0].(error)
	re := wantOutcome(t, err, retry.OutcomeNotRetryable, 2)
	pe, ok := errors.AsType[*core.PanicError](re)
	if !ok || pe.Value != want {
		t.Fatalf("value = %v, want a *core.PanicError of %v", err, want)
	}
	if !strings.Contains(string(pe.Stack), panicking) {
		t.Errorf("stack does not show %s:\n%s", panicking, pe.Stack)
	}
}

// On the forwarding goroutine, where no caller can recover it, the panic
// becomes the stream's last value; the process lives on.
func TestStreamRetryPanicIsTheLastValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		r := newRetry(t, streamThenPanic(), testConfig(), rec.options()...)
		ch, err := r.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		wantPanicValue(t, ch, errBoom, "streamThenPanic")
		wantEndedCall(t, rec, "retry.stream", 2)
	})
}

func TestStreamHookAndBudgetPanicsAreTheLastValue(t *testing.T) {
	for name, opt := range map[string]retry.Option{
		"hook":   retry.WithOnRetry(func(context.Context, retry.RetryEvent) { panic("from hook") }),
		"budget": retry.WithBudget(panickyBudget{}),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := mock.New(mock.Stream(errTransient), mock.Stream(errTransient))
				ch, err := newRetry(t, inner, testConfig(), opt).Stream(t.Context(), "q")
				if err != nil {
					t.Fatal(err)
				}
				got := mock.Drain(ch)
				if len(got) != 1 {
					t.Fatalf("values = %v, want one error", got)
				}
				if _, ok := errors.AsType[*core.PanicError](got[0].(error)); !ok {
					t.Errorf("value = %v, want a *core.PanicError", got[0])
				}
			})
		})
	}
}

// panickyBudget panics when asked to record a failure, which only a retry
// does.
type panickyBudget struct{}

func (panickyBudget) Reserve(_ context.Context, n int, _ time.Duration) core.Reservation {
	if n <= 1 {
		return core.Reservation{OK: true}
	}
	return core.Reservation{OK: true}
}
func (panickyBudget) RecordAttempt(_ context.Context, _ int, success bool) {
	if !success {
		panic("from budget")
	}
}

// A logger that panics after the stream's last value was delivered cannot
// deliver it: nothing may follow the last value. The process lives on and
// the consumer sees the call's *Error.
func TestStreamLoggerPanicAfterLastValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.MaxRetries = 1
		logger := slog.New(panickyHandler{})
		inner := mock.New(mock.Stream(errTransient))
		ch, err := newRetry(t, inner, cfg, retry.WithLogger(logger)).Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		got := mock.Drain(ch)
		if len(got) != 1 {
			t.Fatalf("values = %v, want one", got)
		}
		wantOutcome(t, got[0].(error), retry.OutcomeExhausted, 2)
	})
}

type panickyHandler struct{ slog.Handler }

func (panickyHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (panickyHandler) Handle(context.Context, slog.Record) error { panic("from logger") }

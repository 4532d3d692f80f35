package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/ratelimit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newLimited(t *testing.T, inner core.Runnable, lim *rate.Limiter, opts ...ratelimit.Option) *ratelimit.Runnable {
	t.Helper()
	r, err := ratelimit.New(inner, ratelimit.InProcess(lim), append([]ratelimit.Option{ratelimit.WithMeterProvider(noop.NewMeterProvider())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWaitsForTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newLimited(t, mock.New(), rate.NewLimiter(2, 1)) // 2/s, burst 1
		start := time.Now()
		for range 5 {
			if _, err := r.Invoke(t.Context(), "q"); err != nil {
				t.Fatal(err)
			}
		}
		if got := time.Since(start); got != 2*time.Second {
			t.Errorf("5 calls took %v, want 2s (one free, then one per 500ms)", got)
		}
	})
}

func TestWaitRefusedWhenPastDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New()
		r := newLimited(t, inner, rate.NewLimiter(1, 1))
		_, _ = r.Invoke(t.Context(), "q") // takes the only token
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := r.Invoke(ctx, "q")
		var le *ratelimit.LimitedError
		// Retryable after the wait: the deadline may be a per-attempt
		// timeout, and the retry layer checks the caller's own.
		if !errors.As(err, &le) || !le.Deadline || !le.Retryable() || le.RetryAfter() != time.Second || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Invoke() error = %v, want a deadline refusal retryable after 1s", err)
		}
		if time.Since(start) != 0 || inner.CallCount() != 1 {
			t.Errorf("waited %v, inner calls %d, want no wait and 1 call", time.Since(start), inner.CallCount())
		}
		// The refused reservation was given back: the next token is due at 1s.
		time.Sleep(time.Second)
		if !rateAllows(r, t) {
			t.Error("token not available 1s later: the refused wait kept its reservation")
		}
	})
}

func rateAllows(r *ratelimit.Runnable, t *testing.T) bool {
	ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	_, err := r.Invoke(ctx, "q")
	return err == nil
}

func TestFailFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New()
		r := newLimited(t, inner, rate.NewLimiter(4, 1), ratelimit.WithMaxWait(0))
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		_, err := r.Invoke(t.Context(), "q")
		var le *ratelimit.LimitedError
		if !errors.As(err, &le) || !errors.Is(err, ratelimit.ErrLimited) || !le.Retryable() || le.RetryAfter() != 250*time.Millisecond {
			t.Fatalf("Invoke() error = %v, want a retryable LimitedError with RetryAfter 250ms", err)
		}
		if inner.CallCount() != 1 {
			t.Errorf("inner calls = %d, want 1", inner.CallCount())
		}
	})
}

func TestCancelDuringWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newLimited(t, mock.New(), rate.NewLimiter(rate.Every(time.Minute), 1))
		_, _ = r.Invoke(t.Context(), "q")
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		if _, err := r.Invoke(ctx, "q"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Invoke() error = %v, want context.Canceled", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("returned after %v, want 1s", got)
		}
		// The cancelled call's turn, a minute after the first call, went
		// back: the next call takes it, rather than the one after.
		start = time.Now()
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 59*time.Second {
			t.Errorf("the next call waited %v, want 59s: the cancelled call's token given back", got)
		}
	})
}

func TestSharedBucketAndBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(10, 5)
		a := newLimited(t, mock.New(), lim)
		b := newLimited(t, mock.New(), lim)
		start := time.Now()
		_, _ = a.Invoke(t.Context(), "q")
		_, _ = b.Invoke(t.Context(), "q") // 2 of the burst of 5 spent across both
		if _, err := b.Batch(t.Context(), []any{1, 2, 3, 4, 5}); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 200*time.Millisecond {
			t.Errorf("took %v, want 200ms: 3 tokens left, 2 more at 10/s", got)
		}
	})
}

func TestWaitIsTraced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		r := newLimited(t, mock.New(), rate.NewLimiter(2, 1))
		for range 2 {
			ctx, span := tp.Tracer("test").Start(t.Context(), "call")
			_, _ = r.Invoke(ctx, "q")
			span.End()
		}
		spans := rec.Ended()
		if len(spans[0].Events()) != 0 {
			t.Errorf("first call events = %v, want none: no wait", spans[0].Events())
		}
		evs := spans[1].Events()
		if len(evs) != 1 || evs[0].Name != "ratelimit.wait" || evs[0].Attributes[0].Value.AsFloat64() != 0.5 {
			t.Errorf("second call events = %v, want one ratelimit.wait of 0.5s", evs)
		}
	})
}

func TestNewRejectsNil(t *testing.T) {
	if _, err := ratelimit.New(nil, ratelimit.InProcess(rate.NewLimiter(1, 1))); err == nil {
		t.Error("New(nil Runnable) error = nil")
	}
	if _, err := ratelimit.New(mock.New(), ratelimit.InProcess(nil)); err == nil {
		t.Error("New(nil limiter) error = nil")
	}
}

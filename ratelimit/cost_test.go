package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

func quietRetry(t *testing.T, inner core.Runnable, cfg retry.RetryConfig) *retry.RetryRunnable {
	t.Helper()
	r, err := retry.New(inner, cfg, retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A Batch's whole cost is decided at once: a refusal spends no token.
func TestBatchRefusedSpendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(1, 5)
		lim.AllowN(time.Now(), 3) // 2 tokens left
		inner := mock.New()
		r := newLimited(t, inner, lim)
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := r.Batch(ctx, []any{1, 2, 3, 4}) // needs 2 more: 2s
		var le *ratelimit.LimitedError
		if !errors.As(err, &le) || !le.Deadline || le.Wait != 2*time.Second {
			t.Fatalf("Batch() error = %v, want a deadline refusal with a 2s wait", err)
		}
		if time.Since(start) != 0 || inner.CallCount() != 0 {
			t.Errorf("waited %v with %d inner calls, want an immediate refusal", time.Since(start), inner.CallCount())
		}
		if got := lim.TokensAt(time.Now()); got != 2 {
			t.Errorf("tokens = %v after the refusal, want the 2 it had", got)
		}
	})
}

// A cost above the burst can never pass: a permanent error naming the
// burst, not a livelock of fail-fast retries that each spend the burst.
func TestBatchAboveBurstIsPermanent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(10, 3)
		inner := mock.New()
		r := quietRetry(t, newLimited(t, inner, lim, ratelimit.WithMaxWait(0)), retry.DefaultRetryConfig())
		start := time.Now()
		_, err := r.Batch(t.Context(), []any{1, 2, 3, 4})
		be, ok := errors.AsType[*core.BatchError](err)
		if !ok {
			t.Fatalf("Batch() error = %v, want a *core.BatchError", err)
		}
		re, _ := errors.AsType[*retry.Error](be.Errs[0])
		burst, _ := errors.AsType[*ratelimit.LimitedError](err)
		if re == nil || re.Outcome != retry.OutcomeNotRetryable || re.Attempts != 1 || burst == nil || burst.Burst != 3 || burst.Cost != 4 {
			t.Fatalf("Batch() error = %v, want not_retryable after 1 attempt with a LimitedError of cost 4 over a burst of 3", err)
		}
		if !errors.Is(err, ratelimit.ErrLimited) || time.Since(start) != 0 || inner.CallCount() != 0 {
			t.Errorf("took %v with %d inner calls, want at once and none", time.Since(start), inner.CallCount())
		}
		if got := lim.TokensAt(time.Now()); got != 3 {
			t.Errorf("tokens = %v, want the whole burst of 3 unspent", got)
		}
	})
}

// A refusal caused by a per-attempt timeout is retried after the wait;
// only the caller's own deadline ends the call.
func TestRefusalUnderPerAttemptTimeoutIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New()
		cfg := retry.RetryConfig{MaxRetries: 2, PerAttemptTimeout: 100 * time.Millisecond}
		r := quietRetry(t, newLimited(t, inner, rate.NewLimiter(1, 1)), cfg)
		if _, err := r.Invoke(t.Context(), "q"); err != nil { // the only token
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := r.Invoke(t.Context(), "q"); err != nil { // no deadline of its own
			t.Fatalf("Invoke() error = %v, want success after waiting for the token", err)
		}
		if got := time.Since(start); got != time.Second || inner.CallCount() != 2 {
			t.Errorf("took %v with %d inner calls, want 1s and 2", got, inner.CallCount())
		}
		// With a caller's deadline shorter than the wait, the call ends
		// at once with outcome deadline.
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		_, err := r.Invoke(ctx, "q")
		re, ok := errors.AsType[*retry.Error](err)
		if !ok || re.Outcome != retry.OutcomeDeadline || re.Attempts != 1 || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Invoke() error = %v, want deadline after 1 attempt", err)
		}
	})
}

func TestRefusalsAreLocal(t *testing.T) {
	for _, err := range []error{&ratelimit.LimitedError{Wait: time.Second}, &ratelimit.LimitedError{Cost: 2, Burst: 1}} {
		if !errproto.Local(err) {
			t.Errorf("IsLocal(%v) = false, want true", err)
		}
	}
}

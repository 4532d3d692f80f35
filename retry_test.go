package steadfast_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// providerError is how an LLM SDK's error looks to steadfast: a status code
// and maybe a Retry-After hint.
type providerError struct {
	code  int
	after time.Duration
}

func (e *providerError) Error() string             { return fmt.Sprintf("provider: status %d", e.code) }
func (e *providerError) StatusCode() int           { return e.code }
func (e *providerError) RetryAfter() time.Duration { return e.after }

// scriptedLLM fails with errs in order, then answers.
func scriptedLLM(errs ...error) (core.Runnable, func() int) {
	var mu sync.Mutex
	calls := 0
	llm := core.RunnableFunc(func(ctx context.Context, in any, _ ...core.Option) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls <= len(errs) {
			return nil, errs[calls-1]
		}
		return "completion for " + in.(string), nil
	})
	return llm, func() int { mu.Lock(); defer mu.Unlock(); return calls }
}

func TestEndToEndRateLimitedThenOverloadedLLM(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		llm, calls := scriptedLLM(&providerError{code: 429, after: 5 * time.Second}, &providerError{code: 529})
		cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: 10 * time.Second, Jitter: 0.2}
		r := core.Chain(llm, retry.Middleware(cfg))
		start := time.Now()
		out, err := r.Invoke(t.Context(), "hello", core.WithOperation("llm.chat"))
		if err != nil || out != "completion for hello" {
			t.Fatalf("Invoke() = %v, %v, want a completion", out, err)
		}
		if calls() != 3 {
			t.Errorf("provider calls = %d, want 3", calls())
		}
		// 5s exactly for the hint, then the second retry's backoff, 2s with
		// up to 20% jitter taken off.
		took := time.Since(start)
		if took < 5*time.Second+1600*time.Millisecond || took > 7*time.Second {
			t.Errorf("took %v, want within [6.6s, 7s]", took)
		}
	})
}

func TestEndToEndPermanentFailureStopsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		llm, calls := scriptedLLM(&providerError{code: 401})
		r, err := retry.New(llm, retry.DefaultRetryConfig())
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Invoke(t.Context(), "hello")
		var re *retry.Error
		if !errors.As(err, &re) || re.Outcome != retry.OutcomeNotRetryable || re.Attempts != 1 {
			t.Fatalf("Invoke() error = %v, want not_retryable after 1 attempt", err)
		}
		var pe *providerError
		if !errors.As(err, &pe) || pe.code != 401 {
			t.Errorf("errors.As(providerError) = %v, want the 401", pe)
		}
		if calls() != 1 {
			t.Errorf("provider calls = %d, want 1", calls())
		}
	})
}

func TestEndToEndCallerDeadlineEndsRetrying(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errs := make([]error, 10)
		for i := range errs {
			errs[i] = &providerError{code: 503}
		}
		llm, calls := scriptedLLM(errs...)
		cfg := retry.RetryConfig{MaxRetries: 9, InitialBackoff: time.Second, MaxBackoff: time.Minute}
		r := retry.NewRetryRunnable(llm, cfg)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		start := time.Now()
		_, err := r.Invoke(ctx, "hello")
		// Attempts at 0s, 1s, 3s, 7s; the next would start at 15s, past the deadline.
		if got := time.Since(start); got != 7*time.Second {
			t.Errorf("returned after %v, want 7s (no sleep into the deadline)", got)
		}
		if !errors.Is(err, context.DeadlineExceeded) || calls() != 4 {
			t.Errorf("err = %v, calls = %d, want a deadline error after 4 calls", err, calls())
		}
	})
}

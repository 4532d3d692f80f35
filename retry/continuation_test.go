package retry_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

// seen records the AttemptInfo of every attempt that reaches it, and fails.
type seen struct{ infos []retry.AttemptInfo }

func (s *seen) runnable(err error) core.Runnable {
	return core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		info, _ := retry.AttemptFromContext(ctx)
		s.infos = append(s.infos, info)
		return nil, err
	})
}

// A continued call keeps its InvocationID, numbers its attempts on from
// the earlier runs', and makes MaxRetries+1 attempts in all; OnAttempt
// sees each number before the attempt is made.
func TestContinuationCarriesIdentityAndAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s seen
		r := newRetry(t, s.runnable(errTransient), testConfig()) // 4 attempts in all
		var started []int
		ctx := retry.WithContinuation(t.Context(), retry.Continuation{
			InvocationID: "wf-1/activity-7",
			Attempts:     2,
			OnAttempt:    func(_ context.Context, n int) { started = append(started, n) },
		})
		_, err := r.Invoke(ctx, "q")
		wantOutcome(t, err, retry.OutcomeExhausted, 4)
		if len(s.infos) != 2 || s.infos[0].Attempt != 3 || s.infos[1].Attempt != 4 {
			t.Errorf("attempts %+v, want two: 3 and 4 (two were made before)", s.infos)
		}
		for _, info := range s.infos {
			if info.InvocationID != "wf-1/activity-7" {
				t.Errorf("InvocationID = %q, want the continuation's", info.InvocationID)
			}
		}
		if !slices.Equal(started, []int{3, 4}) {
			t.Errorf("OnAttempt saw %v, want [3 4]", started)
		}
	})
}

// When earlier runs made every attempt, the call fails at once, exhausted,
// with no attempt: Invoke, Batch and Stream alike.
func TestContinuationSpentMakesNoAttempt(t *testing.T) {
	var s seen
	r := newRetry(t, s.runnable(errTransient), testConfig())
	ctx := retry.WithContinuation(t.Context(), retry.Continuation{Attempts: 4})
	_, err := r.Invoke(ctx, "q")
	wantOutcome(t, err, retry.OutcomeExhausted, 4)
	_, err = r.Batch(ctx, []any{"a", "b"})
	var be *core.BatchError
	if !errors.As(err, &be) {
		t.Fatalf("Batch() error = %v, want a *core.BatchError", err)
	}
	for i, ierr := range be.Errs {
		var re *retry.Error
		if !errors.As(ierr, &re) || re.Outcome != retry.OutcomeExhausted || re.Attempts != 4 {
			t.Errorf("Batch item %d error = %v, want exhausted after 4 attempts", i, ierr)
		}
	}
	_, err = r.Stream(ctx, "q")
	wantOutcome(t, err, retry.OutcomeExhausted, 4)
	if len(s.infos) != 0 {
		t.Errorf("%d attempts made, want none", len(s.infos))
	}
}

// A wait longer than HandOff is not slept: the call ends handed_off with
// the wait in Error.Wait, the server's hint (past MaxBackoff) or the
// backoff alike; a shorter one is slept as always.
func TestContinuationHandsOffLongWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Fail(&mock.HTTPError{Code: 429, After: 45 * time.Second}), mock.OK("ok"))
		r := newRetry(t, inner, testConfig())
		ctx := retry.WithContinuation(t.Context(), retry.Continuation{HandOff: 10 * time.Second})
		start := time.Now()
		_, err := r.Invoke(ctx, "q")
		wantOutcome(t, err, retry.OutcomeHandedOff, 1)
		var re *retry.Error
		if errors.As(err, &re) && re.Wait != 45*time.Second {
			t.Errorf("Wait = %v, want the hint, 45s", re.Wait)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("took %v, want no sleep", took)
		}

		inner = mock.New(mock.Fail(&mock.HTTPError{Code: 503}), mock.OK("ok"))
		r = newRetry(t, inner, testConfig()) // a 1s backoff: slept
		if _, err := r.Invoke(ctx, "q"); err != nil {
			t.Errorf("Invoke() error = %v, want the retry after a 1s backoff to succeed", err)
		}
	})
}

// A call nested in a continued call's attempt is a call of its own: it
// neither takes the continuation's identity nor its attempts (it retries,
// with Nested "retry", by its own count).
func TestContinuationIsTheOutermostCallsOnly(t *testing.T) {
	var s seen
	inner := newRetry(t, s.runnable(errTransient), retry.RetryConfig{MaxRetries: 1, Nested: "retry"})
	outer := newRetry(t, inner, retry.RetryConfig{MaxRetries: 0})
	ctx := retry.WithContinuation(t.Context(), retry.Continuation{InvocationID: "outer", Attempts: 0})
	_, _ = outer.Invoke(ctx, "q")
	if len(s.infos) != 2 {
		t.Fatalf("%d inner attempts, want 2", len(s.infos))
	}
	for _, info := range s.infos {
		if info.InvocationID == "outer" || info.MaxAttempts != 2 {
			t.Errorf("nested attempt %+v, want an InvocationID of its own", info)
		}
	}
}

// A job runner that runs a call again in another process (after a crash,
// or after sleeping a long wait itself) continues it: the same
// InvocationID, and the attempts already made count.
func ExampleWithContinuation() {
	llm := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		info, _ := retry.AttemptFromContext(ctx)
		return fmt.Sprintf("attempt %d of %d, call %s", info.Attempt, info.MaxAttempts, info.InvocationID), nil
	})
	r, err := retry.New(llm, retry.RetryConfig{MaxRetries: 3})
	if err != nil {
		panic(err)
	}
	ctx := retry.WithContinuation(context.Background(), retry.Continuation{
		InvocationID: "job-42",
		Attempts:     2,                // made by the crashed worker
		HandOff:      10 * time.Second, // longer waits are the runner's to sleep
	})
	out, _ := r.Invoke(ctx, "q")
	fmt.Println(out)
	// Output: attempt 3 of 4, call job-42
}

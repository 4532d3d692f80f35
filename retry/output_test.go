package retry_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

var errNotJSON = errors.New("not JSON")

// wantsJSON rejects any output that is not a JSON object.
func wantsJSON(_ context.Context, _, out any) error {
	if s, _ := out.(string); !strings.HasPrefix(s, "{") {
		return errNotJSON
	}
	return nil
}

// feedBack appends the previous attempt's error to a prompt, as a new
// value.
func feedBack(_ context.Context, in any, err error) any {
	return fmt.Sprintf("%v [previous answer rejected: %v]", in, err)
}

func TestCheckOutputRetriesWithNextInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.OK("Sure! Here it is"), mock.OK(`{"ok":true}`))
		cfg := testConfig()
		cfg.CheckOutput, cfg.NextInput = wantsJSON, feedBack
		rec := newRecorder()
		out, err := newRetry(t, inner, cfg, rec.options()...).Invoke(t.Context(), "give JSON")
		if err != nil || out != `{"ok":true}` {
			t.Fatalf("Invoke() = %v, %v, want the second, valid answer", out, err)
		}
		calls := inner.Calls()
		if calls[0].Input != "give JSON" || calls[1].Input != "give JSON [previous answer rejected: retry: output rejected: not JSON]" {
			t.Errorf("inputs = %q, %q, want the prompt, then the prompt with the feedback", calls[0].Input, calls[1].Input)
		}
		first := rec.ended("retry.attempt")[0]
		wantAttrs(t, "rejected attempt", first.Attributes(), map[string]string{"error.type": "invalid_output", "retry.retryable": "true"})
	})
}

// A check's Permanent error stops at once; the *retry.Error wraps the last
// check error.
func TestCheckOutputPermanentStops(t *testing.T) {
	inner := mock.New(mock.OK("truncated answer"))
	cfg := testConfig()
	truncated := errors.New("truncated")
	cfg.CheckOutput = func(context.Context, any, any) error { return retry.Permanent(truncated) }
	_, err := newRetry(t, inner, cfg).Invoke(t.Context(), "q")
	re := wantOutcome(t, err, retry.OutcomeNotRetryable, 1)
	if !errors.Is(re.Err, truncated) || !strings.Contains(re.Err.Error(), "output rejected") {
		t.Errorf("error = %v, want it to wrap the check's error as a rejected output", err)
	}
}

// typedCheck names its own error.type.
type typedCheck struct{}

func (typedCheck) Error() string     { return "empty answer" }
func (typedCheck) ErrorType() string { return "empty_answer" }

// A rejected output does not ask the budget for a turn: a budget that
// refuses every retry does not stop a check's retries. It is an answer
// the provider gave, counted as accepted, as the success after it is.
func TestCheckOutputDoesNotTouchTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget := &countingBudget{allow: false}
		inner := mock.New(mock.OK(""), mock.OK(""), mock.OK("fine"))
		cfg := testConfig()
		cfg.CheckOutput = func(_ context.Context, _, out any) error {
			if out == "" {
				return typedCheck{}
			}
			return nil
		}
		rec := newRecorder()
		out, err := newRetry(t, inner, cfg, append(rec.options(), retry.WithBudget(budget))...).Invoke(t.Context(), "q")
		if err != nil || out != "fine" {
			t.Fatalf("Invoke() = %v, %v, want fine after two rejected outputs", out, err)
		}
		if budget.failures != 0 || budget.asked != 0 || budget.successes != 3 {
			t.Errorf("budget: %d failures, %d asks, %d accepted, want 0, 0, 3", budget.failures, budget.asked, budget.successes)
		}
		wantAttrs(t, "rejected attempt", rec.ended("retry.attempt")[0].Attributes(), map[string]string{"error.type": "empty_answer"})
	})
}

// countingBudget counts what it is told and asked.
type countingBudget struct {
	allow                      bool
	asked, failures, successes int
}

func (b *countingBudget) Reserve(_ context.Context, n int, _ time.Duration) core.Reservation {
	if n <= 1 {
		return core.Reservation{OK: true}
	}
	b.asked++
	return core.Reservation{OK: b.allow}
}
func (b *countingBudget) RecordAttempt(_ context.Context, _ int, ok bool) {
	if ok {
		b.successes++
	} else {
		b.failures++
	}
}

// NextInput never modifies the caller's input; rewrites build on each
// other.
func TestNextInputLeavesTheCallersInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		msgs := []string{"user: hi"}
		inner := mock.New(mock.Fail(errTransient), mock.Fail(errTransient), mock.OK("ok"))
		cfg := testConfig()
		cfg.NextInput = func(_ context.Context, in any, err error) any {
			return append(slices.Clone(in.([]string)), "system: "+err.Error())
		}
		if _, err := newRetry(t, inner, cfg).Invoke(t.Context(), msgs); err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 1 {
			t.Errorf("caller's messages = %v, want them untouched", msgs)
		}
		if got := inner.Calls()[2].Input.([]string); len(got) != 3 {
			t.Errorf("third attempt's input = %v, want two rewrites built on each other", got)
		}
	})
}

func TestBatchItemsAreCheckedAndRewritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := funcs{batch: func(_ context.Context, ins []any) ([]any, error) {
			outs := make([]any, len(ins))
			for i, in := range ins {
				outs[i] = "{" + in.(string) // valid JSON-ish once...
				if strings.HasPrefix(in.(string), "b") && !strings.Contains(in.(string), "rejected") {
					outs[i] = "plain " + in.(string) // ...but b's first answer is not
				}
			}
			return outs, nil
		}}
		cfg := testConfig()
		cfg.CheckOutput, cfg.NextInput = wantsJSON, feedBack
		inputs := []any{"a", "b", "c"}
		outs, err := newRetry(t, inner, cfg).Batch(t.Context(), inputs)
		if err != nil {
			t.Fatal(err)
		}
		want := []any{"{a", "{b [previous answer rejected: retry: output rejected: not JSON]", "{c"}
		if !slices.Equal(outs, want) || !slices.Equal(inputs, []any{"a", "b", "c"}) {
			t.Errorf("outs = %q (inputs %q), want %q with the caller's inputs untouched", outs, inputs, want)
		}
	})
}

func TestBatchItemCheckPermanent(t *testing.T) {
	inner := core.RunnableFunc(func(_ context.Context, in any, _ ...core.Option) (any, error) { return in, nil })
	cfg := testConfig()
	cfg.CheckOutput = func(_ context.Context, _, out any) error {
		if out == 2 {
			return retry.Permanent(errors.New("filtered"))
		}
		return nil
	}
	outs, err := newRetry(t, inner, cfg).Batch(t.Context(), []any{1, 2})
	be, ok := errors.AsType[*core.BatchError](err)
	if !ok || outs[0] != 1 || outs[1] != nil {
		t.Fatalf("Batch() = %v, %v, want item 2 failed", outs, err)
	}
	wantOutcome(t, be.Errs[1], retry.OutcomeNotRetryable, 1)
}

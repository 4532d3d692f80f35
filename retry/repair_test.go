package retry_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

// errOverflow is a context overflow: permanent, and fixed by a smaller
// request.
var errOverflow = retry.Permanent(errors.New("maximum context length exceeded"))

// shorten is a Repair that fixes an overflow by asking for less.
func shorten(_ context.Context, in any, err error) (any, bool) {
	if !errors.Is(err, errOverflow) {
		return nil, false
	}
	return in.(string) + " (shorter)", true
}

// A permanent failure that Repair fixes is tried again at once with the
// changed input: no backoff, no retry spent, no budget token; the call
// span has a retry.repair event and the repaired attempt retry.repaired.
func TestRepairTriesTheChangedInputAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Fail(errOverflow), mock.OK("ok"))
		cfg := testConfig()
		cfg.MaxRetries, cfg.Repair = 0, shorten // no retry at all: the repair spends none
		budget := retry.NewTokenBudget(1, 1)    // one token, taken below
		budget.RecordAttempt(t.Context(), 1, false)
		rec := newRecorder()
		start := time.Now()
		out, err := newRetry(t, inner, cfg, append(rec.options(), retry.WithBudget(budget))...).Invoke(t.Context(), "q")
		if err != nil || out != "ok" {
			t.Fatalf("Invoke() = %v, %v; want ok after the repair", out, err)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("took %v; want the repaired attempt at once", took)
		}
		if calls := inner.Calls(); len(calls) != 2 || calls[1].Input != "q (shorter)" {
			t.Errorf("calls = %+v; want q, then q (shorter)", calls)
		}
		attempts := rec.ended("retry.attempt")
		wantAttrs(t, "repaired attempt", attempts[1].Attributes(), map[string]string{"retry.repaired": "true", "retry.attempt": "2"})
		wantAttrs(t, "failed attempt", attempts[0].Attributes(), nil, "retry.repaired")
		call := rec.one(t, "retry.invoke")
		if !hasEvent(call, "retry.repair") || hasEvent(call, "retry.backoff") {
			t.Errorf("call span events = %v; want retry.repair and no retry.backoff", call.Events())
		}
	})
}

func hasEvent(s sdktrace.ReadOnlySpan, name string) bool {
	for _, e := range s.Events() {
		if e.Name == name {
			return true
		}
	}
	return false
}

// Without Repair, a permanent failure is one request; a Repair that fixes
// nothing is tried MaxRepairs times, then the call ends not_retryable
// with the last failure.
func TestRepairIsBoundedByMaxRepairs(t *testing.T) {
	for name, tc := range map[string]struct {
		repair     func(context.Context, any, error) (any, bool)
		maxRepairs int
		calls      int
	}{
		"no Repair":              {nil, 0, 1},
		"MaxRepairs 0 means one": {shorten, 0, 2},
		"MaxRepairs 3":           {shorten, 3, 4},
		"Repair declines":        {func(context.Context, any, error) (any, bool) { return nil, false }, 3, 1},
	} {
		inner := mock.New(mock.Fail(errOverflow))
		cfg := testConfig()
		cfg.Repair, cfg.MaxRepairs = tc.repair, tc.maxRepairs
		_, err := newRetry(t, inner, cfg).Invoke(t.Context(), "q")
		re := wantOutcome(t, err, retry.OutcomeNotRetryable, tc.calls)
		if !errors.Is(re, errOverflow) || inner.CallCount() != tc.calls {
			t.Errorf("%s: %d calls, error %v; want %d, ending with the overflow", name, inner.CallCount(), err, tc.calls)
		}
	}
}

// Repair is offered only what the rules call permanent: a retryable
// failure is retried as before, and a non-idempotent Runnable's retryable
// failure (not retried, but not permanent) is not repaired.
func TestRepairIsOfferedOnlyPermanentFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var offered int
		cfg := testConfig()
		cfg.Repair = func(_ context.Context, in any, _ error) (any, bool) { offered++; return in, true }
		inner := mock.New(mock.Fail(errTransient), mock.OK("ok"))
		if _, err := newRetry(t, inner, cfg).Invoke(t.Context(), "q"); err != nil || offered != 0 {
			t.Errorf("retryable failure: err %v, Repair offered %d times; want retried, never offered", err, offered)
		}
		once := nonIdempotent{mock.New(mock.Fail(errTransient))}
		_, err := newRetry(t, once, cfg).Invoke(t.Context(), "q")
		wantOutcome(t, err, retry.OutcomeNotRetryable, 1)
		if offered != 0 {
			t.Errorf("non-idempotent retryable failure offered to Repair %d times; want none", offered)
		}
	})
}

type nonIdempotent struct{ *mock.Runnable }

func (nonIdempotent) Idempotent() bool { return false }

// A Repair that returns a nil input with true is a configuration error,
// named; one that panics ends the call with the panic, not a crash.
func TestAFaultyRepairEndsTheCall(t *testing.T) {
	for name, tc := range map[string]struct {
		repair func(context.Context, any, error) (any, bool)
		want   string
	}{
		"nil with true": {func(context.Context, any, error) (any, bool) { return nil, true }, "Repair returned a nil input"},
		"panics":        {func(context.Context, any, error) (any, bool) { panic("boom") }, "Repair panicked"},
	} {
		inner := mock.New(mock.Fail(errOverflow), mock.OK("ok"))
		cfg := testConfig()
		cfg.Repair = tc.repair
		_, err := newRetry(t, inner, cfg).Invoke(t.Context(), "q")
		re := wantOutcome(t, err, retry.OutcomeNotRetryable, 1)
		if !strings.Contains(err.Error(), tc.want) || !errors.Is(re, errOverflow) || inner.CallCount() != 1 {
			t.Errorf("%s: error %v after %d calls; want %q, with the overflow, after 1", name, err, inner.CallCount(), tc.want)
		}
		if name == "nil with true" {
			if _, ok := errors.AsType[*retry.ConfigError](err); !ok {
				t.Errorf("%s: error %v; want a *retry.ConfigError", name, err)
			}
		}
		if name == "panics" {
			if _, ok := errors.AsType[*core.PanicError](err); !ok {
				t.Errorf("%s: error %v; want a *core.PanicError", name, err)
			}
		}
	}
}

// A Stream's creation is repaired as an Invoke is.
func TestRepairOfAStreamsCreation(t *testing.T) {
	inner := mock.New(mock.Fail(errOverflow), mock.Stream(nil, "a", "b"))
	cfg := testConfig()
	cfg.Repair = shorten
	ch, err := newRetry(t, inner, cfg).Stream(t.Context(), "q")
	if err != nil {
		t.Fatal(err)
	}
	if got := mock.Drain(ch); len(got) != 2 {
		t.Errorf("chunks = %v; want a, b", got)
	}
	if calls := inner.Calls(); len(calls) != 2 || calls[1].Input != "q (shorter)" {
		t.Errorf("calls = %+v; want q, then q (shorter)", calls)
	}
}

// Each Batch item is repaired on its own, and only the repaired item is
// sent again, at once.
func TestRepairOfBatchItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.OK("fine")).ForInput("long", mock.Fail(errOverflow)).ForInput("long (shorter)", mock.OK("fits"))
		cfg := testConfig()
		cfg.Repair = shorten
		start := time.Now()
		outs, err := newRetry(t, inner, cfg).Batch(t.Context(), []any{"a", "long", "b"})
		if err != nil || outs[0] != "fine" || outs[1] != "fits" || outs[2] != "fine" {
			t.Fatalf("Batch() = %v, %v; want fine, fits, fine", outs, err)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("took %v; want the repaired item sent at once", took)
		}
		calls := inner.Calls()
		if last := calls[len(calls)-1]; len(last.Inputs) != 1 || last.Inputs[0] != "long (shorter)" {
			t.Errorf("last call %+v; want only the repaired item", last)
		}
	})
}

// MaxRepairs below 0 is a ConfigError, and policy files carry
// max_repairs.
func TestMaxRepairsConfig(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRepairs = -1
	if _, ok := errors.AsType[*retry.ConfigError](cfg.Validate()); !ok {
		t.Errorf("Validate() with MaxRepairs -1 = %v; want a *retry.ConfigError", cfg.Validate())
	}
	var got retry.RetryConfig
	if err := got.UnmarshalJSON([]byte(`{"max_retries": 2, "max_repairs": 3}`)); err != nil || got.MaxRepairs != 3 {
		t.Errorf("UnmarshalJSON = %+v, %v; want MaxRepairs 3", got, err)
	}
	if _, _, err := retry.ParsePolicies([]byte(`{"default": {}, "llm": {"max_repairs": -2}}`)); err == nil || !strings.Contains(err.Error(), "max_repairs") {
		t.Errorf("a policy with max_repairs -2: %v; want an error naming max_repairs", err)
	}
}

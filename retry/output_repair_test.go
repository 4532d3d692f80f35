package retry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

// unfence takes a JSON answer out of a code fence: a local fix.
func unfence(_ context.Context, _, out any, _ error) (any, bool) {
	s, _ := out.(string)
	t := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "```json"), "```")
	return strings.TrimSpace(t), t != s
}

// outputRepairs returns the repair.rung of each retry.output_repair event
// of a call span.
func outputRepairs(s sdktrace.ReadOnlySpan) []string {
	var rungs []string
	for _, ev := range s.Events() {
		if ev.Name != "retry.output_repair" {
			continue
		}
		for _, kv := range ev.Attributes {
			if kv.Key == "repair.rung" {
				rungs = append(rungs, kv.Value.AsString())
			}
		}
	}
	return rungs
}

// A rejected answer that RepairOutput fixes, and that then passes the
// check, is delivered from the same request: no backoff, no retry.
func TestRepairOutputFixesInPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.OK("```json\n{\"ok\":true}\n```"), mock.OK("unreachable"))
		cfg := testConfig()
		cfg.CheckOutput, cfg.NextInput, cfg.RepairOutput = wantsJSON, feedBack, unfence
		rec := newRecorder()
		start := time.Now()
		out, err := newRetry(t, inner, cfg, rec.options()...).Invoke(t.Context(), "give JSON")
		if err != nil || out != `{"ok":true}` || inner.CallCount() != 1 || time.Since(start) != 0 {
			t.Fatalf("Invoke() = %v, %v after %d requests and %v, want the fixed answer of 1 at once", out, err, inner.CallCount(), time.Since(start))
		}
		call := rec.ended("retry.invoke")[0]
		if got := outputRepairs(call); len(got) != 1 || got[0] != "local" {
			t.Errorf("output repairs %v, want [local]", got)
		}
		wantAttrs(t, "call", call.Attributes(), map[string]string{"retry.attempts": "1", "retry.outcome": "success"})
	})
}

// A fix the check rejects too is never delivered: the re-ask follows,
// with NextInput's input, and says so; so does a RepairOutput that
// declines.
func TestRepairOutputThatFailsTheCheckIsNotDelivered(t *testing.T) {
	for name, fix := range map[string]func(context.Context, any, any, error) (any, bool){
		"fix rejected": func(context.Context, any, any, error) (any, bool) { return "still not JSON", true },
		"declined":     func(context.Context, any, any, error) (any, bool) { return nil, false },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := mock.New(mock.OK("Sure!"), mock.OK(`{"ok":true}`))
				cfg := testConfig()
				cfg.CheckOutput, cfg.NextInput, cfg.RepairOutput = wantsJSON, feedBack, fix
				rec := newRecorder()
				out, err := newRetry(t, inner, cfg, rec.options()...).Invoke(t.Context(), "give JSON")
				if err != nil || out != `{"ok":true}` || inner.CallCount() != 2 {
					t.Fatalf("Invoke() = %v, %v after %d requests, want the re-asked answer of 2", out, err, inner.CallCount())
				}
				if in := inner.Calls()[1].Input; !strings.Contains(in.(string), "previous answer rejected") {
					t.Errorf("re-ask input %q, want NextInput's", in)
				}
				if got := outputRepairs(rec.ended("retry.invoke")[0]); len(got) != 1 || got[0] != "reask" {
					t.Errorf("output repairs %v, want [reask]", got)
				}
			})
		})
	}
}

// MaxOutputRepairs fixes build on each other, up to that many an answer.
func TestMaxOutputRepairsChainsFixes(t *testing.T) {
	peel := func(_ context.Context, _, out any, _ error) (any, bool) { // one layer of brackets a fix
		s := out.(string)
		if strings.HasPrefix(s, "[") {
			return s[1 : len(s)-1], true
		}
		return nil, false
	}
	for _, tc := range []struct{ max, requests int }{{0, 2}, {1, 2}, {2, 1}} {
		synctest.Test(t, func(t *testing.T) {
			inner := mock.New(mock.OK(`[[{"ok":true}]]`), mock.OK(`{"ok":true}`))
			cfg := testConfig()
			cfg.CheckOutput, cfg.RepairOutput, cfg.MaxOutputRepairs = wantsJSON, peel, tc.max
			out, err := newRetry(t, inner, cfg).Invoke(t.Context(), "q")
			if err != nil || out != `{"ok":true}` || inner.CallCount() != tc.requests {
				t.Errorf("MaxOutputRepairs %d: Invoke() = %v, %v after %d requests, want %d", tc.max, out, err, inner.CallCount(), tc.requests)
			}
		})
	}
}

// Each Batch item is fixed in place on its own.
func TestRepairOutputInABatch(t *testing.T) {
	inner := core.RunnableFunc(func(_ context.Context, in any, _ ...core.Option) (any, error) {
		if in == "fenced" {
			return "```json\n{\"a\":1}\n```", nil
		}
		return `{"b":2}`, nil
	})
	cfg := testConfig()
	cfg.CheckOutput, cfg.RepairOutput = wantsJSON, unfence
	outs, err := newRetry(t, inner, cfg).Batch(t.Context(), []any{"fenced", "plain"})
	if err != nil || outs[0] != `{"a":1}` || outs[1] != `{"b":2}` {
		t.Errorf("Batch() = %q, %v, want both answers, the first fixed", outs, err)
	}
}

// MaxOutputRepairs must not be negative, and reads from JSON.
func TestMaxOutputRepairsConfig(t *testing.T) {
	_, err := retry.New(mock.New(), retry.RetryConfig{MaxOutputRepairs: -1}, quiet...)
	if err == nil || !strings.Contains(err.Error(), "MaxOutputRepairs") {
		t.Errorf("New() with MaxOutputRepairs -1 = %v, want an error naming MaxOutputRepairs", err)
	}
	var cfg retry.RetryConfig
	if err := json.Unmarshal([]byte(`{"max_output_repairs": 3}`), &cfg); err != nil || cfg.MaxOutputRepairs != 3 {
		t.Errorf(`{"max_output_repairs": 3} gave %d, %v`, cfg.MaxOutputRepairs, err)
	}
}

// NextInput reads the answer it re-asks about with RejectedOutput: the
// provider's own, not a fix RepairOutput tried; so does the caller, from
// the call's error.
func TestRejectedOutputIsTheProvidersAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.OK("Sure!"), mock.OK("Still prose"))
		cfg := testConfig()
		cfg.MaxRetries = 1
		cfg.CheckOutput = wantsJSON
		cfg.RepairOutput = func(context.Context, any, any, error) (any, bool) { return "a failed fix", true }
		var seen []any
		cfg.NextInput = func(_ context.Context, in any, err error) any {
			out, reason, _ := retry.RejectedOutput(err)
			if reason != errNotJSON {
				t.Errorf("RejectedOutput's reason %v, want the check's %v", reason, errNotJSON)
			}
			seen = append(seen, out)
			return in
		}
		_, err := newRetry(t, inner, cfg).Invoke(t.Context(), "q")
		last, _, ok := retry.RejectedOutput(err)
		if len(seen) != 1 || seen[0] != "Sure!" || !ok || last != "Still prose" {
			t.Errorf("NextInput saw %v, the call's error %v (%v); want Sure!, then Still prose", seen, last, ok)
		}
		if _, _, ok := retry.RejectedOutput(errTransient); ok {
			t.Error("RejectedOutput of a transient failure reports true")
		}
	})
}

package repair_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/repair"
	"github.com/steadfast-go/steadfast/retry"
)

// Whatever the text, a repair that JSON reports is valid JSON, never blank,
// and never an empty object or array made from a text that was not one.
func FuzzJSON(f *testing.F) {
	for _, e := range corpus(f) {
		if e.Tools == nil {
			f.Add(e.Output)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, ok := repair.JSON(s)
		if !ok {
			if out != "" {
				t.Errorf("JSON(%q) = %q, false: want nothing with false", s, out)
			}
			return
		}
		if !json.Valid([]byte(out)) || strings.TrimSpace(out) == "" {
			t.Errorf("JSON(%q) = %q, true: not valid, or blank", s, out)
		}
		if (out == "{}" || out == "[]") && !json.Valid([]byte(strings.TrimSpace(s))) {
			t.Errorf("JSON(%q) = %q, true: an empty answer made from a text that was not one", s, out)
		}
	})
}

// Whatever the name, a tool ToolName reports is one of the tools.
func FuzzToolName(f *testing.F) {
	tools := []string{"get_weather", "get_forecast", "search_docs", "send_email"}
	for _, s := range []string{"get_wether", "GetWeather", "functions.send_email", "", "get_", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, ok := repair.ToolName(name, tools)
		if ok != slices.Contains(tools, got) || (ok && name == "") {
			t.Errorf("ToolName(%q) = %q, %v: want one of the tools with true, or nothing with false", name, got, ok)
		}
	})
}

// Whatever the provider answers, a retry layer that repairs with JSON
// delivers only what passes the check that rejected the answer: here a
// JSON object with a member.
func FuzzRepairedIsChecked(f *testing.F) {
	for _, e := range corpus(f)[:40] {
		f.Add(e.Output)
	}
	f.Fuzz(func(t *testing.T, s string) {
		answers := []string{s, `{"fallback": true}`}
		n := 0
		provider := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
			n++
			return answers[min(n, len(answers))-1], nil
		})
		r, err := retry.New(provider, retry.RetryConfig{MaxRetries: 1, InitialBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond,
			CheckOutput:  anObject,
			RepairOutput: func(_ context.Context, _, out any, _ error) (any, bool) { return repair.JSON(out.(string)) }},
			retry.WithTracerProvider(nil))
		if err != nil {
			t.Fatal(err)
		}
		out, err := r.Invoke(t.Context(), "q")
		if err == nil && anObject(t.Context(), nil, out) != nil {
			t.Errorf("delivered %q for %q, which the check rejects", out, s)
		}
	})
}

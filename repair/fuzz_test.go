package repair_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/steadfast-go/steadfast/repair"
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

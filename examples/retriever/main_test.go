package main

import (
	"bytes"
	"strings"
	"testing"
	"testing/synctest"
)

func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		if err := run(&out); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"round 1: re-sending 2 failed item(s) in 50ms",
			"round 2: re-sending 1 failed item(s) in 100ms",
			`"vector databases" sent 1x ok`,
			`"transformers" sent 2x ok`,
			`"retrieval augmented generation" sent 3x ok`,
			`"'; DROP TABLE docs" sent 1x failed (not_retryable)`,
		} {
			// Compare with runs of spaces folded: the columns are padded.
			if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
	})
}

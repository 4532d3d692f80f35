package main

import (
	"bytes"
	"strings"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { // the backoffs take no real time
		var out bytes.Buffer
		if err := run(&out); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"model-a: attempt 1 failed (provider answered 503), retrying in 50ms",
			`chunks seen by the streaming function: ["Hello" " from model-b"]; answer: "Hello from model-b"`,
			"result: ticket #1001; tickets created: 1, tool runs: 2",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
		// a second 503 in a row, with model-b to go to, ends model-a's turn
		if strings.Contains(out.String(), "model-a: attempt 2 failed") {
			t.Errorf("model-a was retried past its second 503:\n%s", out.String())
		}
	})
}

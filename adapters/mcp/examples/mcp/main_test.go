package main

import (
	"bytes"
	"strings"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun runs the example on synctest's clock: its backoffs take no
// real time.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { check(t) })
}

func check(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"search (idempotent: true)",
		"3 articles on retries",
		"create_ticket (idempotent: false)",
		"ticket HD-1 created",
		"search called 3 times; tickets created: 1",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

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
			"primary: attempt 1 failed",
			`answer: "Hello from the primary model"`,
			"model calls: 1 (a 401 is never retried)",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
	})
}

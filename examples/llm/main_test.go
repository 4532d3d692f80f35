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
			"retrying in 300ms (server's Retry-After)",
			"ok on attempt 2 after 300ms",
			"ok on attempt 3",
			"gave up (not_retryable) after 1 attempt(s)",
			"summary: 2 of 3 calls succeeded, 6 attempts in all",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
	})
}

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

func TestRunStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		if err := runStream(&out); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		for _, want := range []string{
			"[attempt 1 failed before the first token: llm: overloaded before the first token (503)",
			"Retries keep a streaming answer whole, never doubled.",
			"Retries keep a \n  stream failed after its first token, not retried: llm: connection dropped mid-stream (502)",
			"summary: 3 streams opened for 2 prompts",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("output lacks %q:\n%s", want, got)
			}
		}
	})
}

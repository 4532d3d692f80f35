package main

import (
	"io"
	"testing"

	"github.com/steadfast-go/steadfast/internal/exampletest"
)

func TestRun(t *testing.T) {
	exampletest.Check(t, func(w io.Writer) error { return run(w) },
		"retrying in 300ms (server's Retry-After)",
		"ok on attempt 2 after 300ms",
		"ok on attempt 3",
		"gave up (not_retryable) after 1 attempt(s)",
		"summary: 2 of 3 calls succeeded, 6 attempts in all")
}

func TestRunStream(t *testing.T) {
	exampletest.Check(t, func(w io.Writer) error { return runStream(w) },
		"[attempt 1 failed before the first token: llm: overloaded before the first token (503)",
		"Retries keep a streaming answer whole, never doubled.",
		"Retries keep a \n  stream failed after its first token, not retried: llm: connection dropped mid-stream (502)",
		"summary: 3 streams opened for 2 prompts")
}

func TestRunResume(t *testing.T) {
	exampletest.Check(t, func(w io.Writer) error { return runResume(w) },
		"  A resumed stream delivers every token once, in order, and nothing is lost when a connection breaks. \n",
		"[attempt 1 broke: unexpected EOF; resumed after 50ms]",
		"[attempt 2 broke: retry: stream stalled: no chunk within ChunkTimeout 200ms; resumed after 100ms]",
		"summary: 17 of 17 tokens delivered once each, over 3 streams (1 opened, 2 resumed)")
}

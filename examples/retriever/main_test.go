package main

import (
	"testing"

	"github.com/steadfast-go/steadfast/internal/exampletest"
)

func TestRun(t *testing.T) {
	exampletest.Check(t, run,
		"round 1: re-sending 2 failed item(s) in 50ms",
		"round 2: re-sending 1 failed item(s) in 100ms",
		`"vector databases" sent 1x ok`,
		`"transformers" sent 2x ok`,
		`"retrieval augmented generation" sent 3x ok`,
		`"'; DROP TABLE docs" sent 1x failed (not_retryable)`)
}

package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/internal/exampletest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	exampletest.Check(t, run,
		`model-a retry_after_too_long after 1 attempt(s), error.type 429 -> skipped`,
		`model-b silent_timeout after 1 attempt(s), error.type silent_timeout -> skipped`,
		`model-c success after 1 attempt(s), error.type - -> answered "Hello from model-c"`,
		`answered by candidate 2 (model-c) after 2 switches`,
		`no hedging p50 10ms max 200ms requests 10`,
		`hedge after 50ms p50 10ms max 60ms requests 12`)
}

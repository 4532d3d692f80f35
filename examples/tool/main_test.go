package main

import (
	"testing"

	"github.com/steadfast-go/steadfast/internal/exampletest"
)

func TestRun(t *testing.T) {
	exampletest.Check(t, run,
		"RetryNonIdempotent=false: 1 call(s), charges applied: 1",
		"error: retry: payments.charge: not_retryable after 1 attempts: payments: reading response: connection reset by peer",
		"RetryNonIdempotent=true: 2 call(s), charges applied: 1",
		"result: receipt #1 for $42.00 to ACME")
}

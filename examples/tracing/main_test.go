package main

import (
	"testing"

	"github.com/steadfast-go/steadfast/internal/exampletest"
)

func TestRun(t *testing.T) {
	exampletest.Check(t, run,
		"retry.invoke 220ms status=Unset [retry.attempts=2 retry.max_retries=3 retry.operation=llm.chat retry.outcome=success]",
		"  retry.attempt 10ms status=Error [error.type=429 retry.attempt=1 retry.backoff.source=retry_after retry.backoff=0.2 retry.class=rate_limit retry.retryable=true]",
		"    llm.request 10ms status=Unset",
		"error.type=529",
		"retry.invoke 10ms status=Error [error.type=400 retry.attempts=1 retry.max_retries=3 retry.operation=llm.chat retry.outcome=not_retryable]")
}

package main

import (
	"testing"

	"github.com/steadfast-go/steadfast/internal/exampletest"
)

func TestRun(t *testing.T) {
	exampletest.Check(t, run,
		"operation max_retries attempts outcome",
		"retriever 2 2 success",
		"llm.chat 4 3 success",
		"tools.create_ticket 1 2 exhausted: status 503")
}

package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/internal/exampletest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	exampletest.Check(t, run,
		"a conversation, kept on one deployment:",
		"is throttled (429, Retry-After 2s) for 3s:",
		"after 20ms: the retry went elsewhere at once",
		"is out of rotation while it cools",
		"the conversation is home again")
}

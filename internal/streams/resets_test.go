package streams

import (
	"testing"

	"github.com/steadfast-go/steadfast/core"
)

// AcceptsResets finds core.WithResets among other options, a func-valued
// one among them (comparing it would panic), and only it.
func TestAcceptsResetsReadsOnlyWithResets(t *testing.T) {
	type key struct{}
	fn := core.NewOption(key{}, func(any) int { return 1 })
	same := core.NewOption(key{}, true) // a true value under another key
	if !AcceptsResets(fn, core.WithOperation("op"), core.WithResets(), same) {
		t.Error("AcceptsResets(..., WithResets(), ...) = false")
	}
	if AcceptsResets(fn, same, core.WithOperation("op")) || AcceptsResets() {
		t.Error("AcceptsResets without WithResets = true")
	}
}

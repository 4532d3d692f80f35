// Package panics turns a panic recovered on a goroutine of steadfast's own
// into the *core.PanicError delivered where the caller looks for failures.
package panics

import (
	"runtime/debug"

	"github.com/steadfast-go/steadfast/core"
)

// Recovered returns a *core.PanicError for value with the current
// goroutine's stack. Call it in the deferred function that recovered
// value, so the stack still holds the frames that panicked.
func Recovered(value any) *core.PanicError {
	return &core.PanicError{Value: value, Stack: debug.Stack()}
}

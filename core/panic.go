package core

import (
	"fmt"
	"runtime/debug"
)

// PanicError is a panic recovered on a goroutine that a steadfast type
// started for itself (a Stream's forwarding goroutine, a Batch item of
// RunnableFunc), where no caller could have recovered it. It is delivered
// where the caller looks for failures: as a stream's last value, or as the
// failed item's error. It is never worth retrying.
//
// A panic on the caller's own goroutine is not turned into a PanicError: it
// propagates unchanged.
type PanicError struct {
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, taken where it was
	// recovered.
	Stack []byte
}

// newPanicError returns a PanicError for value with the current
// goroutine's stack, taken in the deferred function that recovered it.
func newPanicError(value any) *PanicError {
	return &PanicError{Value: value, Stack: debug.Stack()}
}

// Error returns "panic: " and the panic value.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error, so errors.Is and
// errors.As reach it.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Retryable reports false: a panic is a bug, and repeating the call repeats
// it.
func (e *PanicError) Retryable() bool { return false }

// ErrorType names the error for telemetry: "panic".
func (e *PanicError) ErrorType() string { return "panic" }

// Package callspan is the span of one call of a decorator (fallback,
// hedge): ended exactly once, on success, on failure, or when a panic
// unwinds the call.
package callspan

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/core"
)

// Span is a call's span.
type Span struct {
	trace.Span
	// Ended is set once the span has ended.
	Ended bool
	// HandedOff is set, once and for good, by the caller's goroutine when
	// it hands the call to a goroutine of the decorator's own (a Stream's
	// forwarder), which owns the span from then on.
	HandedOff bool
}

// Succeed ends the span with kv.
func (s *Span) Succeed(kv ...attribute.KeyValue) {
	s.Ended = true
	if s.IsRecording() {
		s.SetAttributes(kv...)
	}
	s.End()
}

// Fail ends the span with status Error and kv.
func (s *Span) Fail(err error, kv ...attribute.KeyValue) {
	s.Ended = true
	if s.IsRecording() {
		s.SetAttributes(kv...)
		s.SetStatus(codes.Error, err.Error())
	}
	s.End()
}

// EndIfUnwinding, deferred by a call on the caller's goroutine, fails the
// span of a call that a panic (or runtime.Goexit) cut short; the panic goes
// on with its value unchanged.
func (s *Span) EndIfUnwinding() {
	if s.Ended || s.HandedOff {
		return
	}
	v := recover()
	s.Fail(&core.PanicError{Value: v})
	if v != nil {
		panic(v)
	}
}

// Attributes returns the attributes of the first Runnable in r's chain
// that knows the attributes of its calls' spans (a CallAttributes method:
// the GenAI conventions' gen_ai.provider.name and gen_ai.request.model),
// through any decorators that wrap it, or nil.
func Attributes(r core.Runnable) []attribute.KeyValue {
	if ca, ok := core.Find[interface{ CallAttributes() []attribute.KeyValue }](r); ok {
		return ca.CallAttributes()
	}
	return nil
}

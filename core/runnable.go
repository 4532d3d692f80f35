// Package core defines the Runnable contract that every steadfast decorator
// wraps and returns: an LLM, a retriever, a tool or a whole chain exposes the
// same three calls (Invoke, Batch, Stream), so retry, rate limiting and circuit
// breaking compose around any of them.
//
// Beside the contract it holds what every decorator shares: call options,
// Chain, a call's State, and the questions a chain answers through its
// decorators (Find, NameOf, IsIdempotent, Resumer). It depends on the standard
// library only, with no OpenTelemetry.
package core

import "context"

// Runnable is a unit of work that can be invoked once, on a batch of inputs,
// or as a stream of chunks.
//
// Stream contract: the channel yields chunks in order and is closed when the
// stream ends. A value of type error is the stream's failure and is the last
// value before the close. When ctx is done the producer stops and closes the
// channel. A consumer that stops reading early must cancel ctx.
//
// Batch contract: len(outputs) == len(inputs) whenever outputs are returned.
// When some items fail and others succeed, Batch returns the outputs (nil at
// failed indexes) and a *BatchError whose Errs are index-aligned with inputs.
//
// Options are passed through decorators to the inner Runnable unchanged.
type Runnable interface {
	Invoke(ctx context.Context, input any, opts ...Option) (any, error)
	Batch(ctx context.Context, inputs []any, opts ...Option) ([]any, error)
	Stream(ctx context.Context, input any, opts ...Option) (<-chan any, error)
}

// Named is implemented by a Runnable that has a default operation name, used
// for per-operation policy and telemetry when a call does not name one with
// WithOperation.
type Named interface {
	Name() string
}

// Idempotency is implemented by a Runnable that knows whether repeating a call
// is safe. Idempotent returning false means a repeated call may repeat a side
// effect (a payment, an email), so decorators must not repeat it unless told to.
type Idempotency interface {
	Idempotent() bool
}

// NameOf returns the Name of the first Runnable in r's chain that
// implements Named, else "". A decorator that wraps one Runnable and keeps
// its meaning exposes it with an Unwrap() Runnable method, which NameOf
// and IsIdempotent follow, so it need not forward Name or Idempotent by
// hand; one that changes what a method means (a fallback's Idempotent,
// true only when every candidate is) implements that method itself, and
// the lookup stops there.
func NameOf(r Runnable) string {
	if n, ok := Find[Named](r); ok {
		return n.Name()
	}
	return ""
}

// IsIdempotent returns the Idempotent of the first Runnable in r's chain
// (see NameOf) that implements Idempotency, else true: a Runnable that
// does not say is presumed safe to repeat.
func IsIdempotent(r Runnable) bool {
	i, ok := Find[Idempotency](r)
	return !ok || i.Idempotent()
}

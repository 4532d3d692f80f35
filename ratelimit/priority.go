package ratelimit

import "context"

// Priority is the class a call waits in for a Concurrency permit: under
// saturation a higher class goes first, a waiting call ages towards the
// front, and none waits longer than ConcurrencyConfig.MaxStarvation. A
// call whose context carries none is Standard.
type Priority int8

const (
	// Interactive is a user waiting for the answer.
	Interactive Priority = iota + 1
	// Standard is the default.
	Standard
	// Batch is work no one waits on: evaluations, backfills, indexing.
	Batch
)

type priorityKey struct{}

// WithPriority returns a context whose calls wait for a Concurrency
// permit in class p: set it where the request comes in (an HTTP handler
// marks a user's request Interactive; a job runner, Batch). A p that is
// not one of the three leaves ctx as it is.
func WithPriority(ctx context.Context, p Priority) context.Context {
	if p < Interactive || p > Batch {
		return ctx
	}
	return context.WithValue(ctx, priorityKey{}, p)
}

// priorityOf returns the class of ctx's calls: Standard unless
// WithPriority set one.
func priorityOf(ctx context.Context) Priority {
	if p, ok := ctx.Value(priorityKey{}).(Priority); ok {
		return p
	}
	return Standard
}

// name is p's value of the ratelimit.priority attribute.
func (p Priority) name() string {
	switch p {
	case Interactive:
		return "interactive"
	case Batch:
		return "batch"
	}
	return "standard"
}

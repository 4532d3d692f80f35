// Package route tells a retry layer inside a route (a fallback's
// candidate) that another route can serve the call, so that a silent
// attempt ends the route's turn instead of being retried on it; and lets
// a router below the retry layer (a pool) say that it can send the
// attempt's next try elsewhere itself, which comes first.
package route

import (
	"context"
	"sync/atomic"

	"github.com/steadfast-go/steadfast/core"
)

type alternativeKey struct{}

// WithAlternative returns ctx marked: if this route goes silent, another
// can serve the call.
func WithAlternative(ctx context.Context) context.Context {
	if HasAlternative(ctx) {
		return ctx
	}
	return context.WithValue(ctx, alternativeKey{}, true)
}

// HasAlternative reports whether ctx is marked by WithAlternative.
func HasAlternative(ctx context.Context) bool {
	v, _ := ctx.Value(alternativeKey{}).(bool)
	return v
}

// elsewhere is, in a call's core.State, whether the router that chose
// the current attempt's way has another way for the next.
var elsewhere = core.NewStateKey[bool]("")

// SetElsewhere records, for the attempt under way in ctx's call, whether
// the router that chose it can send the next attempt another way. It
// records nothing outside a route marked by WithAlternative.
func SetElsewhere(ctx context.Context, ok bool) {
	if HasAlternative(ctx) {
		elsewhere.Store(ctx, ok)
	}
}

// Elsewhere reports what SetElsewhere recorded for ctx's call.
func Elsewhere(ctx context.Context) bool {
	ok, _ := elsewhere.Load(ctx)
	return ok
}

// ToolWatch learns whether a stream delivered a tool call, which its
// consumer may have run: such a stream is not started again from its
// input unless the Runnable says it is idempotent.
type ToolWatch struct {
	called atomic.Bool
	parent *ToolWatch // a layer above that watches too
}

type toolWatchKey struct{}

// WatchToolCalls returns a context under which MarkToolCall tells w, and
// every ToolWatch above it.
func WatchToolCalls(ctx context.Context) (context.Context, *ToolWatch) {
	parent, _ := ctx.Value(toolWatchKey{}).(*ToolWatch)
	w := &ToolWatch{parent: parent}
	return context.WithValue(ctx, toolWatchKey{}, w), w
}

// MarkToolCall tells every ToolWatch of ctx that a stream delivered a
// tool call.
func MarkToolCall(ctx context.Context) {
	w, _ := ctx.Value(toolWatchKey{}).(*ToolWatch)
	for ; w != nil; w = w.parent {
		w.called.Store(true)
	}
}

// Called reports whether a tool call was marked under w; false for nil.
func (w *ToolWatch) Called() bool { return w != nil && w.called.Load() }

// SaysIdempotent reports whether r's chain says, itself, that repeating
// a call is safe: core.IsIdempotent presumes it of a Runnable that does
// not say, which is too little for a call whose tool may have run.
func SaysIdempotent(r core.Runnable) bool {
	i, ok := core.Find[core.Idempotency](r)
	return ok && i.Idempotent()
}

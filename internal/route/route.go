// Package route tells a retry layer inside a route (a fallback's
// candidate) that another route can serve the call, so that a silent
// attempt ends the route's turn instead of being retried on it; and lets
// a router below the retry layer (a pool) say that it can send the
// attempt's next try elsewhere itself, which comes first.
package route

import (
	"context"

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

// Package route tells a retry layer inside a route (a fallback's
// candidate) that another route can serve the call, so that a silent
// attempt ends the route's turn instead of being retried on it.
package route

import "context"

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

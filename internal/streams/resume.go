package streams

import (
	"context"

	"github.com/steadfast-go/steadfast/core"
)

// ErrNotResumable is core.ErrNotResumable, under the name the decorators
// of this module use.
var ErrNotResumable = core.ErrNotResumable

// CanResume reports whether r is a core.Resumer that can resume the
// stream of the call ctx belongs to: what a decorator that wraps r answers
// for itself.
func CanResume(ctx context.Context, r core.Runnable) bool {
	res, ok := r.(core.Resumer)
	return ok && res.CanResume(ctx)
}

// resets is core.WithResets's option, which carries no value of its own.
var resets = core.WithResets()

// AcceptsResets reports whether opts hold core.WithResets: whether a
// stream of this call may yield a core.Reset. An Option is compared key
// first, so another option's value (a func) is never compared.
func AcceptsResets(opts ...core.Option) bool {
	for _, o := range opts {
		if o == resets {
			return true
		}
	}
	return false
}

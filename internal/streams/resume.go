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

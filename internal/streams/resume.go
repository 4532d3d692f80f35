package streams

import (
	"context"

	"github.com/steadfast-go/steadfast/core"
)

// ErrNotResumable is matched (errors.Is) by the error of a Resume that
// cannot continue the stream: what the decorator wraps does not resume,
// or no longer knows the stream. It is not retryable; the retry layer
// ends the stream with the failure that broke it, as it would without
// resuming.
var ErrNotResumable error = notResumable{}

type notResumable struct{}

func (notResumable) Error() string     { return "stream cannot be resumed" }
func (notResumable) Retryable() bool   { return false }
func (notResumable) ErrorType() string { return "not_resumable" }

// CanResume reports whether r is a core.Resumer that can resume the
// stream of the call ctx belongs to: what a decorator that wraps r answers
// for itself.
func CanResume(ctx context.Context, r core.Runnable) bool {
	res, ok := r.(core.Resumer)
	return ok && res.CanResume(ctx)
}

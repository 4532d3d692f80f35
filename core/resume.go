package core

import "context"

// ErrNotResumable is matched (errors.Is) by the error of a Resume that
// cannot continue the stream: what a decorator wraps does not resume, or
// no longer knows the stream. It is not retryable; a retry layer ends the
// stream with the failure that broke it, as it would without resuming. A
// Resumer of your own returns it (or wraps it) for a stream it cannot
// continue.
var ErrNotResumable error = notResumable{}

type notResumable struct{}

func (notResumable) Error() string     { return "stream cannot be resumed" }
func (notResumable) Retryable() bool   { return false }
func (notResumable) ErrorType() string { return "not_resumable" }

// Resumer is implemented by a Runnable whose streams can continue after a
// failure without repeating or losing a chunk.
//
// Resume returns a stream of the chunks that follow last, the last chunk
// the consumer received from a stream of input: the same contract as
// Stream, as if the broken stream had gone on. A Resume that cannot
// continue the stream returns ErrNotResumable, or an error that wraps it.
//
// CanResume reports whether Resume can continue the stream of the call
// ctx belongs to (ctx carries that call's State): the candidate or
// deployment it was served by, the response it reads. Given a context
// with no State, it reports whether any of its streams could resume. A
// retry layer asks it once when it is built, and again when a stream
// breaks, before it backs off: it never waits, asks its budget or opens
// an attempt for a Resume that cannot happen.
//
// A decorator that wraps one Runnable implements Resume as a call of its
// own (a circuit counts it, a limiter charges it), and CanResume by asking
// what it wraps: a Runnable that is no Resumer cannot resume.
type Resumer interface {
	Resume(ctx context.Context, input any, last any, opts ...Option) (<-chan any, error)
	CanResume(ctx context.Context) bool
}

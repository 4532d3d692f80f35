package core

import (
	"context"
	"errors"
)

// Resumer is implemented by a Runnable whose streams can continue after a
// failure without repeating or losing a chunk. Resume returns a stream of
// the chunks that follow last, the last chunk the consumer received from a
// stream of input: the same contract as Stream, as if the broken stream
// had gone on.
//
// A decorator that wraps one Runnable implements Resume as a call of its
// own (a circuit counts it, a limiter charges it) and answers
// ErrNotResumable when what it wraps cannot resume.
type Resumer interface {
	Resume(ctx context.Context, input any, last any, opts ...Option) (<-chan any, error)
}

// ErrNotResumable is matched (errors.Is) by the error of a Resume that
// cannot continue the stream: the Runnable, or one it wraps, does not
// resume, or no longer knows the stream. A retry layer ends the stream as
// it would without resuming.
var ErrNotResumable = errors.New("core: stream cannot be resumed")

// ResumeChecker is implemented by a Runnable that answers CanResume for
// itself: a decorator over several Runnables (for its candidates), or a
// Runnable whose streams resume only when configured to. Given the context
// of a call (one that carries its State), it answers for that call's
// stream: the candidate it committed on, the response it reads. Given a
// context with no State, it answers whether any of its streams could.
type ResumeChecker interface {
	CanResume(ctx context.Context) bool
}

// CanResume reports whether r's streams can be resumed: r, or the
// Runnable its chain of Unwrap reaches, is a Resumer whose Resume can
// continue a stream. A Runnable that implements ResumeChecker answers for
// itself and the chain below it; a Wrapper without Resume, or a Runnable
// that is no Resumer, cannot resume. The retry layer asks once, when it is
// built, and never spends a backoff, a budget's token or an attempt on a
// Resume that cannot happen.
func CanResume(r Runnable) bool {
	return CanResumeStream(context.Background(), r)
}

// CanResumeStream reports whether the stream of the call ctx belongs to
// can be resumed through r: CanResume, narrowed by each ResumeChecker in
// the chain to that call's stream. The retry layer asks it when a stream
// breaks, before it backs off.
func CanResumeStream(ctx context.Context, r Runnable) bool {
	for r != nil {
		if c, ok := r.(ResumeChecker); ok {
			return c.CanResume(ctx)
		}
		if _, ok := r.(Resumer); !ok {
			return false
		}
		w, ok := r.(Wrapper)
		if !ok {
			return true // a Resumer of its own streams
		}
		r = w.Unwrap()
	}
	return false
}

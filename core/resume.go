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

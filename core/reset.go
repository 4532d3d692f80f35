package core

// Reset is a stream value that voids every chunk before it: the stream
// starts again after it, from its input, and the chunks that follow are
// the whole answer. Cause is the failure that broke the stream before.
//
// A Runnable yields a Reset only to a caller that passed WithResets; to
// any other, after the first chunk a failure is the stream's last value,
// as the Stream contract says. A consumer that accepts Resets throws away
// what it kept of the stream (a buffer, the text on a screen) when one
// comes; a decorator forwards it as it forwards a chunk.
type Reset struct {
	Cause error
}

type resetsKey struct{}

// WithResets tells the Runnable of a Stream call that its caller can
// discard the chunks it has received: a stream that breaks after its first
// chunk may start again after a Reset (a retry layer's RestartStreams, a
// fallback's next candidate) rather than end with the failure. Decorators
// pass it through to the Runnables they wrap.
func WithResets() Option {
	return Option{key: resetsKey{}, value: true}
}

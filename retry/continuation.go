package retry

import (
	"context"
	"time"
)

// Continuation carries one logical call across processes: a durable
// engine (Temporal, say) that runs the call again after a worker died, or
// after a wait it chose to take itself, gives the retry layer what the
// earlier runs spent, so that the call keeps its identity and its one
// allowance of attempts.
type Continuation struct {
	// InvocationID, when not empty, is the call's InvocationID in every
	// attempt (see AttemptInfo), in place of one drawn by the process: a
	// tool retried after a worker crash sees the same idempotency key.
	InvocationID string
	// Attempts is how many attempts earlier runs made. This run's first
	// attempt is number Attempts+1, backoffs go on growing from there, and
	// the call makes at most MaxRetries+1 attempts in all: when earlier
	// runs spent them, the call fails at once with OutcomeExhausted.
	Attempts int
	// HandOff, when positive, is the longest wait the call sleeps before
	// a retry (a backoff, a server's hint or a budget's pace): a longer one
	// ends the call with OutcomeHandedOff and the wait in Error.Wait, for
	// the engine to sleep without holding a worker.
	HandOff time.Duration
	// OnAttempt, when set, is called as each attempt starts, with its
	// number, before the inner Runnable is: where the engine checkpoints
	// the attempts made, so that a crash mid-attempt still counts it.
	OnAttempt func(ctx context.Context, n int)
}

type continuationKey struct{}

// WithContinuation returns a context whose next RetryRunnable call (the
// outermost one: calls nested in its attempts do not see it) continues c.
func WithContinuation(ctx context.Context, c Continuation) context.Context {
	return context.WithValue(ctx, continuationKey{}, &c)
}

// continuationFrom returns the continuation ctx carries for the call
// starting with it, nil when none.
func continuationFrom(ctx context.Context) *Continuation {
	c, _ := ctx.Value(continuationKey{}).(*Continuation)
	return c
}

// prior is how many attempts earlier runs of the call made.
func (c *call) prior() int {
	if c.cont == nil {
		return 0
	}
	return c.cont.Attempts
}

// spent returns the error of a continued call whose earlier runs made
// every attempt it may make, else nil.
func (c *call) spent() *Error {
	if n := c.prior(); n >= c.maxAttempts {
		return c.newError(decision{outcome: OutcomeExhausted}, n, nil)
	}
	return nil
}

// handOff reports whether a wait of d before the next attempt is longer
// than the call sleeps itself.
func (c *call) handOff(d time.Duration) bool {
	return c.cont != nil && c.cont.HandOff > 0 && d > c.cont.HandOff
}

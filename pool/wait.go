package pool

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// DefaultMaxWait is how long a call waits at most, unless WithMaxWait says
// otherwise, for a deployment whose provider's headers leave no room until
// their reset: a minute's window, the usual one of requests and tokens
// (OpenAI's and Anthropic's per-minute limits), and not a day's.
const DefaultMaxWait = time.Minute

// attrWait is the wait, in seconds, on the pool.wait span event.
const attrWait = attribute.Key("pool.wait")

// WithMaxWait sets how long a call waits at most, within its context's
// deadline, when no deployment can take it only because their providers'
// headers (llmhttp.RateLimited) say they have no room left until a reset:
// the call waits in the pool for the first reset and takes its turn then,
// without spending a retry. Past it, or with 0, the pool refuses at once
// with an *UnavailableError, as it does when deployments cool down after
// failures. A negative d is an error from New.
func WithMaxWait(d time.Duration) Option {
	return func(c *config) { c.maxWait = d }
}

// awaitRoom waits for the first deployment's room, when c found none only
// because their providers' headers leave none until a reset: the call
// chooses again then, taking its turn among the calls that waited with it.
// It returns c's *UnavailableError instead when the wait is a cooldown's
// (a failure's: the retry layer decides what to do with it), or would take
// the call, which began waiting at since, past WithMaxWait or its
// context's deadline; and the context's error if it ends during the wait.
func (r *Runnable) awaitRoom(ctx context.Context, c choice, since time.Time) error {
	wait := c.until.Sub(c.now)
	if !c.paced || c.now.Sub(since)+wait > r.maxWait || beyondDeadline(ctx, c.until) {
		return r.unavailable(c.now, c.until)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("pool.wait", trace.WithAttributes(attrWait.Float64(wait.Seconds())))
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("pool: waiting %v for a deployment's limits to reset: %w", wait.Round(time.Millisecond), context.Cause(ctx))
	}
}

// beyondDeadline reports whether ctx ends before t.
func beyondDeadline(ctx context.Context, t time.Time) bool {
	dl, ok := ctx.Deadline()
	return ok && dl.Before(t)
}

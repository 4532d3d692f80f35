package pool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/room"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// defaultMaxWait is how long a call waits at most, unless WithMaxWait says
// otherwise, for a deployment whose provider's headers leave no room until
// their reset: a minute's window, the usual one of requests and tokens
// (OpenAI's and Anthropic's per-minute limits), and not a day's.
const defaultMaxWait = time.Minute

// attrWait is the wait, in seconds, on the pool.wait span event.
const attrWait = attribute.Key("pool.wait")

// WithMaxWait sets how long a call waits at most, within its context's
// deadline, when no deployment can take it only because their providers'
// headers (a RateLimits method) say they have no room left until a reset:
// the call waits in the pool for the first reset and takes its turn then,
// without spending a retry. Past it, or with 0, the pool refuses at once
// with an *UnavailableError, as it does when deployments cool down after
// failures. A negative d is an error from New. The default is a minute:
// the usual window of requests and tokens (OpenAI's and Anthropic's
// per-minute limits), and not a day's.
func WithMaxWait(d time.Duration) Option {
	return func(c *config) { c.maxWait = d }
}

// waitEnded reports a wait for room that slept waited and ended with err
// (see room.Await) on the span in ctx, and returns what the call gets: nil
// when a deployment has room now, the *UnavailableError of c, the last
// choice, when the wait was refused, or the context's end.
func (r *Runnable) waitEnded(ctx context.Context, c choice, waited time.Duration, err error) error {
	if waited > 0 {
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			span.AddEvent("pool.wait", trace.WithAttributes(attrWait.Float64(waited.Seconds())))
		}
	}
	if err == nil {
		return nil
	}
	if _, refused := errors.AsType[*room.TooLong](err); refused {
		return r.unavailable(c.now, c.until)
	}
	return fmt.Errorf("pool: waiting for a deployment's limits to reset: %w", err)
}

// awaitReset waits, within b, for the reset before which c found no
// deployment with room: a Batch's items that found none wait once, then
// are sent again.
func (r *Runnable) awaitReset(ctx context.Context, c choice, b room.Bound) error {
	asked := false
	waited, err := room.Await(ctx, b, func() core.Reservation {
		if asked {
			return room.Go()
		}
		asked = true
		return room.After(c.until.Sub(c.now), c.paced)
	})
	return r.waitEnded(ctx, c, waited, err)
}

package retry

import (
	"context"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/run"
)

// A first attempt that succeeds, with every feature that would watch it
// off, is the floor a retry layer cannot go below (DESIGN §12): the
// caller's ctx.Err, the attempt's context (one allocation) and the inner
// call. Invoke sends it so when the layer has no telemetry, budget,
// per-operation policies, timeouts, output check or token bound, and the
// call's context no continuation or run (plain, worked out once, and
// three lookups): nothing it skips would have done anything for an
// attempt that succeeds. Its failure is handed to the call record
// (invoke), which goes on from there as if it had made the attempt: what
// decides what follows a failure stays in one place.

// plain reports whether r's Invoke may make its first attempt bare: no
// feature of the layer's watches an attempt that succeeds.
func (r *RetryRunnable) plain() bool {
	c := &r.cfg
	return r.tel.tracer == nil && r.tel.calls == nil && r.tel.genAI == nil && r.budget == nil && r.policies == nil &&
		c.PerAttemptTimeout == 0 && c.FirstChunkTimeout == 0 && c.CheckOutput == nil && c.MaxRetryTokens == 0
}

// firstAttempt makes a plain layer's first attempt when ctx lets it: it
// returns the attempt's context (nil when it made none: the call record
// makes it), and its output and error.
func (r *RetryRunnable) firstAttempt(ctx context.Context, input any, opts []core.Option) (*attemptCtx, any, error) {
	if ctx.Err() != nil || continuationFrom(ctx) != nil || run.From(ctx) != nil {
		return nil, nil, nil
	}
	a := &attemptCtx{Context: ctx, attempt: 1, operation: r.operation(opts)}
	a.root = a
	_, nested := ctx.Value(attemptKey{}).(*attemptCtx)
	a.maxAttempts = int32(r.cfg.attempts(nested))
	out, err := r.inner.Invoke(a, input, opts...)
	return a, out, err
}

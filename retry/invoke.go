package retry

import (
	"context"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/callspan"
)

// Invoke calls the inner Runnable's Invoke until it succeeds, fails with an
// error that is not retryable, or the policy, the budget or the caller's
// context ends the call. Every failure is a *Error. Invoke starts no
// goroutine; each backoff uses one timer, stopped on return.
func (r *RetryRunnable) Invoke(ctx context.Context, input any, opts ...core.Option) (any, error) {
	var c call
	ctx = r.begin(ctx, &c, callspan.Invoke, opts)
	defer c.endIfUnwinding(ctx)
	if e := c.spent(); e != nil {
		c.fail(ctx, e)
		return nil, e
	}
	if e := c.admit(ctx); e != nil {
		c.fail(ctx, e)
		return nil, e
	}
	var last error
	in := input // the attempt's input: NextInput and Repair may rewrite it
	for n := c.prior() + 1; ; n++ {
		if cerr := ctx.Err(); cerr != nil { // c.stopped by hand: it is too large to inline
			e := c.newError(decision{outcome: ctxOutcome(cerr)}, n-1, last)
			c.fail(ctx, e)
			return nil, e
		}
		var a attempt
		c.startAttempt(ctx, &a, n, c.cfg.PerAttemptTimeout)
		out, err := any(nil), a.refused
		if err == nil {
			out, err = r.inner.Invoke(a.ctx, in, opts...)
		}
		if err = a.result(ctx, err); err == nil {
			if out, err = c.checked(ctx, n, in, out); err == nil {
				c.endAttempt(ctx, &a, nil, decision{})
				c.recordSuccess(ctx, n)
				c.succeed(ctx, n)
				return out, nil
			}
		}
		err = markSilent(ctx, &a, err, c.cfg.PerAttemptTimeout)
		last = err
		if e := c.retryOrStop(ctx, &a, err, &in); e != nil {
			c.fail(ctx, e)
			return nil, e
		}
		if !c.repairNext {
			c.saidReask(n, err)
			in = c.nextInput(ctx, in, err)
		}
	}
}

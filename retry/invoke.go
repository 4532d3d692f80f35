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
	if r.bare {
		first, out, err := r.firstAttempt(ctx, input, opts)
		if first != nil && err == nil {
			return out, nil
		}
		return r.invoke(ctx, input, opts, first, err)
	}
	return r.invoke(ctx, input, opts, nil, nil)
}

// invoke is Invoke's call record; first, when not nil, is the first
// attempt, made bare (fast.go), which failed with firstErr.
func (r *RetryRunnable) invoke(ctx context.Context, input any, opts []core.Option, first *attemptCtx, firstErr error) (any, error) {
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
		var a attempt
		var out any
		var err error
		if first != nil {
			a.n, a.ctx, c.first, c.attempts, c.live = 1, first, first, 1, true
			first, err = nil, firstErr
		} else {
			if cerr := ctx.Err(); cerr != nil { // c.stopped by hand: it is too large to inline
				e := c.newError(decision{outcome: ctxOutcome(cerr)}, n-1, last)
				c.fail(ctx, e)
				return nil, e
			}
			c.startAttempt(ctx, &a, n, c.cfg.PerAttemptTimeout)
			if err = a.refused; err == nil {
				out, err = r.inner.Invoke(a.ctx, in, opts...)
			}
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

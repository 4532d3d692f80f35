package retry

import (
	"context"
	"time"
)

// decision is what follows a failed attempt: a backoff, or the outcome that
// ends the call (or, in a Batch, the item).
type decision struct {
	outcome   string // non-empty: stop with this outcome
	retryable bool   // the failure was classified retryable
	delay     time.Duration
	source    backoffSource
}

// This file is the one place where the rules that follow a failed attempt
// are written, for Invoke, Stream and each Batch item alike, in this order:
//
//  1. verdict: the caller's context is done; the idempotency guard and the
//     classification rules 2 to 8 (classify.go); the failure is charged to
//     the budget (not a rejected output); the attempts are spent; the
//     server's hint is longer than MaxRetryAfter;
//  2. schedule: the delay, the server's hint or the computed backoff, would
//     pass the caller's deadline;
//  3. allowRetry: the budget refuses the retry (not asked for a rejected
//     output); a pacing budget's wait, when longer, replaces the backoff.
//
// decide runs the three for one failure. A Batch runs verdict for each
// failed item (once for a whole-batch failure), schedule once for the round
// with the longest hint of its items, and allowRetry for each item (once
// for a whole-batch failure).

// decide applies every rule to attempt n's failure err.
func (c *call) decide(ctx context.Context, n int, err error) decision {
	d := c.verdict(ctx, n, err)
	if d.outcome == "" {
		c.schedule(ctx, n, &d)
	}
	if d.outcome == "" && !rejected(err) {
		wait, ok := c.allowRetry(ctx)
		c.pace(ctx, &d, wait, ok)
	}
	return d
}

// pace applies the budget's answer to decision d: a refusal ends the call;
// a wait longer than the backoff replaces it, unless it would pass the
// caller's deadline.
func (c *call) pace(ctx context.Context, d *decision, wait time.Duration, ok bool) {
	switch {
	case !ok:
		d.outcome = OutcomeBudgetExhausted
	case wait > d.delay:
		d.delay, d.source = wait, sourceBudget
		if dl, has := ctx.Deadline(); has && !time.Now().Add(wait).Before(dl) {
			d.outcome = OutcomeDeadline
		}
	}
}

// verdict decides whether attempt n's failure may be retried at all. When
// it may, the decision carries the server's hint, if any, as its delay.
func (c *call) verdict(ctx context.Context, n int, err error) decision {
	if cerr := ctx.Err(); cerr != nil {
		return decision{outcome: ctxOutcome(cerr)}
	}
	if !c.retryable(err) {
		return decision{outcome: OutcomeNotRetryable}
	}
	d := decision{retryable: true}
	if !rejected(err) {
		c.recordAttempt(ctx, n, false)
	}
	if n >= c.maxAttempts {
		d.outcome = OutcomeExhausted
		return d
	}
	if hint, ok := retryAfter(err); ok {
		if hint > c.cfg.maxRetryAfter() {
			d.outcome = OutcomeRetryAfterTooLong
			return d
		}
		d.delay, d.source = hint, sourceRetryAfter
	}
	return d
}

// retryable applies the idempotency guard, then the classification rules.
func (c *call) retryable(err error) bool {
	if idem := c.r.idem; idem != nil && !c.cfg.RetryNonIdempotent && !idem.Idempotent() {
		return false
	}
	return retryable(c.cfg, err)
}

// schedule sets the delay before the attempt after n (the server's hint
// already in d, else the computed backoff) and stops with outcome deadline
// when the next attempt could not start before the caller's deadline.
func (c *call) schedule(ctx context.Context, n int, d *decision) {
	if d.source == sourceNone {
		d.delay, d.source = c.cfg.backoff(n, c.r.random()), sourceComputed
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Add(d.delay).Before(dl) {
		d.outcome = OutcomeDeadline
	}
}

// allowRetry asks the budget, if any, for one retry: the wait a pacing
// budget asks for, and whether it is allowed. It counts a refusal.
func (c *call) allowRetry(ctx context.Context) (time.Duration, bool) {
	b := c.r.budget
	if b == nil {
		return 0, true
	}
	var wait time.Duration
	ok := true
	if c.r.pacer != nil {
		wait, ok = c.r.pacer.ReserveRetry(ctx)
	} else {
		ok = b.AllowRetry(ctx)
	}
	if !ok && c.metrics {
		c.r.tel.budgetRefused.Add(ctx, 1, c.attrs.attemptOK...)
	}
	return wait, ok
}

// recordAttempt tells the budget, if any, how attempt n ended.
func (c *call) recordAttempt(ctx context.Context, n int, success bool) {
	switch {
	case c.r.recorder != nil:
		c.r.recorder.RecordAttempt(ctx, n, success)
	case c.r.budget != nil:
		c.r.budget.Record(ctx, success)
	}
}

// retryOrStop is what follows a failed Invoke or Stream attempt a: the
// decision, the end of the attempt and the backoff. It returns nil when
// the next attempt may start, else the *Error that ends the call.
func (c *call) retryOrStop(ctx context.Context, a *attempt, err error) *Error {
	d := c.decide(ctx, a.n, err)
	c.endAttempt(ctx, a, err, d)
	if d.outcome == "" {
		d.outcome = c.sleep(ctx, a.n, err, d, 1)
	}
	if d.outcome != "" {
		return c.newError(d.outcome, a.n, err)
	}
	return nil
}

// stopped returns the *Error of a call whose caller's context is done
// before its next attempt, after attempts attempts, else nil. It is small
// enough to inline on the success path.
func (c *call) stopped(ctx context.Context, attempts int, last error) *Error {
	if cerr := ctx.Err(); cerr != nil {
		return c.ctxError(cerr, attempts, last)
	}
	return nil
}

func (c *call) ctxError(cerr error, attempts int, last error) *Error {
	return c.newError(ctxOutcome(cerr), attempts, last)
}

// recordSuccess tells the budget that attempt n (or a Batch item's) succeeded.
func (c *call) recordSuccess(ctx context.Context, n int) {
	if c.r.budget != nil {
		c.recordAttempt(ctx, n, true)
	}
}

// check runs CheckOutput, if any, on an attempt's output.
func (c *call) check(ctx context.Context, input, output any) error {
	if c.cfg.CheckOutput == nil {
		return nil
	}
	if err := c.cfg.CheckOutput(ctx, input, output); err != nil {
		return &OutputError{Err: err}
	}
	return nil
}

// nextInput returns the input of the attempt after one that was sent input
// and failed with err.
func (c *call) nextInput(ctx context.Context, input any, err error) any {
	if c.cfg.NextInput == nil {
		return input
	}
	return c.cfg.NextInput(ctx, input, err)
}

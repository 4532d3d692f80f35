package retry

import (
	"context"
	"time"

	"github.com/steadfast-go/steadfast/internal/errproto"
)

// decision is what follows a failed attempt: a backoff, or the outcome that
// ends the call (in a Batch, every item of the round).
type decision struct {
	outcome   Outcome // non-empty: stop with this outcome
	limit     Class   // the class whose MaxRetriesByClass bound ended it, if one did
	retryable bool    // a failure was classified retryable
	delay     time.Duration
	source    BackoffSource
}

// This file holds the rules that follow a failed attempt, the one place
// where they are written, for Invoke, Stream and Batch alike. An attempt
// has one failure (an Invoke or Stream attempt, a Batch round that failed
// whole) or several (the failed items of a Batch round). In order:
//
//  1. the caller's context is done: everything stops;
//  2. verdict, for each failure: the idempotency guard and classification
//     rules 2 to 8; the failure is charged to the budget (unless it is a
//     rejected output); its attempts are spent; its server hint is longer
//     than MaxRetryAfter;
//  3. schedule, once: the delay is the longest server hint of the
//     failures that may go again, else the computed backoff; it must not
//     pass the caller's deadline;
//  4. the budget, for each failure that may go again (but a rejected
//     output): a refusal ends it; the longest wait a pacing budget asks
//     for replaces the delay when longer, and must not pass the deadline.

// decide applies the rules to attempt n's failures errs, each counted in
// its tallies[i] of retries by class. It writes in ends[i] the outcome that
// ends failure i, or "" when it goes again after the decision's delay, and
// in limits[i] the class whose bound ended it, if one did. The decision's
// outcome is set when none goes again.
func (c *call) decide(ctx context.Context, n int, errs []error, tallies []*classTally, ends []Outcome, limits []Class) decision {
	if cerr := ctx.Err(); cerr != nil {
		return endAll(decision{outcome: ctxOutcome(cerr)}, ends)
	}
	var d decision
	again := 0
	for i, err := range errs {
		v := c.verdict(ctx, n, err, tallies[i])
		ends[i], limits[i] = v.outcome, v.limit
		d.retryable = d.retryable || v.retryable
		if v.outcome == "" {
			again++
			if v.delay > d.delay {
				d.delay, d.source = v.delay, BackoffRetryAfter
			}
		}
	}
	if again == 0 {
		d.outcome, d.limit = ends[0], limits[0]
		return d
	}
	if d.source == 0 {
		d.delay, d.source = c.cfg.backoff(n, c.r.random()), BackoffComputed
	}
	if pastDeadline(ctx, d.delay) {
		d.outcome = OutcomeDeadline
		return endAll(d, ends)
	}
	var wait time.Duration
	for i, err := range errs {
		if ends[i] != "" || rejected(err) { // a rejected output does not ask
			continue
		}
		w, ok := c.reserveRetry(ctx)
		if !ok {
			ends[i] = OutcomeBudgetExhausted
			if again--; again == 0 {
				d.outcome = OutcomeBudgetExhausted
				return d
			}
			continue
		}
		wait = max(wait, w)
	}
	if wait > d.delay {
		d.delay, d.source = wait, BackoffBudget
		if pastDeadline(ctx, wait) {
			d.outcome = OutcomeDeadline
			return endAll(d, ends)
		}
	}
	if c.handOff(d.delay) {
		d.outcome, c.waited = OutcomeHandedOff, d.delay
		return endAll(d, ends)
	}
	return d
}

// verdict decides whether attempt n's failure err may be retried at all,
// counting the retry in tally by err's class. When it may, the decision
// carries the server's hint, if any, as its delay.
func (c *call) verdict(ctx context.Context, n int, err error, tally *classTally) decision {
	if !c.retryable(err) {
		return decision{outcome: OutcomeNotRetryable}
	}
	d := decision{retryable: true}
	if !rejected(err) && n != c.reported {
		c.recordAttempt(ctx, n, false)
	}
	if n >= c.maxAttempts {
		d.outcome = OutcomeExhausted
		return d
	}
	if bounds := c.cfg.MaxRetriesByClass; len(bounds) > 0 && tally != nil {
		class := ClassOf(err)
		if bound, ok := bounds[class]; ok && tally[class.index()] >= bound {
			d.outcome, d.limit = OutcomeExhausted, class
			return d
		}
		tally[class.index()]++
	}
	if hint, ok := errproto.RetryAfter(err); ok {
		if hint > c.cfg.maxRetryAfter() {
			d.outcome = OutcomeRetryAfterTooLong
			return d
		}
		d.delay = hint
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

// pastDeadline reports whether an attempt after a wait of d could not start
// before the caller's deadline.
func pastDeadline(ctx context.Context, d time.Duration) bool {
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Add(d).Before(dl)
}

// endAll ends every failure still going again with d's outcome.
func endAll(d decision, ends []Outcome) decision {
	for i := range ends {
		if ends[i] == "" {
			ends[i] = d.outcome
		}
	}
	return d
}

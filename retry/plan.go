package retry

import (
	"context"
	"time"
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

// plan is what follows attempt n's failures errs, the one place where it
// is worked out, for Invoke, Stream and Batch alike. An attempt has one
// failure (an Invoke or Stream attempt, a Batch round that failed whole)
// or several (the failed items of a Batch round); repaired[i], when
// repaired is not nil, is how many of failure i's attempts were repairs,
// which spend no retry; tokens[i], when tokens is not nil, the tokens
// failure i's call or item has thrown away. In order:
//
//  1. the caller's context is done: everything stops;
//  2. the rules (decide), for each failure; a retryable failure is
//     reported to the budget (unless it is a rejected output, or was
//     reported already), and one that goes again is counted in its
//     tally (spent[i]);
//  3. the schedule, once (schedule).
//
// It writes in ends[i] the outcome that ends failure i, or "" when it goes
// again after the decision's delay, and in limits[i] the class whose bound
// ended it, if one did. The decision's outcome is set when none goes
// again.
func (c *call) plan(ctx context.Context, n int, errs []error, spent []*classTally, repaired []int, tokens []int64, ends []Outcome, limits []Class) decision {
	if cerr := ctx.Err(); cerr != nil {
		return endAll(decision{outcome: ctxOutcome(cerr)}, ends)
	}
	var d decision
	again := 0
	idempotent := c.r.idem == nil || c.r.idem.Idempotent()
	for i, err := range errs {
		maxAttempts := c.maxAttempts
		if repaired != nil {
			maxAttempts += repaired[i]
		}
		var discarded int64
		if tokens != nil {
			discarded = tokens[i]
		}
		v := decide(c.cfg, idempotent, n, maxAttempts, err, spent[i], discarded)
		ends[i], limits[i] = v.outcome, v.limit
		d.retryable = d.retryable || v.retryable
		if v.retryable && !rejected(err) && n != c.reported {
			c.recordAttempt(ctx, n, false)
		}
		if v.outcome != "" {
			continue
		}
		if spent[i] != nil && v.class != "" {
			spent[i][v.class.index()]++
		}
		again++
		if v.hint > d.delay {
			d.delay, d.source = v.hint, BackoffRetryAfter
		}
	}
	if again == 0 {
		d.outcome, d.limit = ends[0], limits[0]
		return d
	}
	return c.schedule(ctx, n, d, errs, ends, again)
}

// schedule sets the delay before the next attempt of the failures that go
// again: the longest server hint among them, else the computed backoff;
// then each asks the budget (a rejected output does not), whose refusal
// ends it and whose longest wait replaces the delay when longer. A delay
// that would pass the caller's deadline ends them all, and one longer than
// the hand-off hands the call off.
func (c *call) schedule(ctx context.Context, n int, d decision, errs []error, ends []Outcome, again int) decision {
	if d.source == 0 {
		d.delay, d.source = c.cfg.backoff(n, c.r.random()), BackoffComputed
	}
	if pastDeadline(ctx, d.delay) {
		d.outcome = OutcomeDeadline
		return endAll(d, ends)
	}
	var wait time.Duration
	for i, err := range errs {
		if ends[i] != "" || rejected(err) {
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
		d.outcome = OutcomeHandedOff
		return endAll(d, ends)
	}
	return d
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

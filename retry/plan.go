package retry

import (
	"context"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/internal/room"
)

// decision is what follows a failed attempt: a backoff, or the outcome that
// ends the call (in a Batch, every item of the round).
type decision struct {
	outcome   Outcome // non-empty: stop with this outcome
	limit     Class   // the class whose MaxRetriesByClass bound ended it, if one did
	retryable bool    // a failure was classified retryable
	delay     time.Duration
	source    backoffSource
	run       error // the run's refusal that ends the call, if it did
}

// failure is one failure of an attempt as the rules read it: an Invoke or
// Stream attempt's, a Batch round's that failed whole, or one failed item
// of a round. plan fills in end and limit.
type failure struct {
	err error
	// tally is its retries so far by class, as its call or item keeps
	// them when tallied; plan counts the retry it decides on, and the
	// caller keeps the tally back. A copy rather than a pointer to the
	// caller's: a pointer held with the error would move an Invoke's call
	// state to the heap.
	tally     classTally
	tallied   bool
	repaired  int     // how many of its attempts were repairs, which spend no retry
	discarded int64   // the tokens its call or item has thrown away
	end       Outcome // what ends it; "" when it goes again after the delay
	limit     Class   // the class whose MaxRetriesByClass bound ended it, if one did
	// turn is the budget's reservation of its retry, given back when the
	// retry is not made after all.
	turn core.Reservation
}

// plan is what follows attempt n's failures fs, the one place where it is
// worked out, for Invoke, Stream and Batch alike. In order:
//
//  1. the caller's context is done: everything stops;
//  2. the rules (decide), for each failure; a failure the provider
//     answered is reported to the budget (unless it was reported
//     already: see answered), and one that goes again is counted in its
//     tally;
//  3. the schedule, once (schedule).
//
// It sets each failure's end and limit; the decision's outcome is set when
// none goes again.
func (c *call) plan(ctx context.Context, n int, fs []failure) decision {
	if cerr := ctx.Err(); cerr != nil {
		return endAll(decision{outcome: ctxOutcome(cerr)}, fs)
	}
	var d decision
	again := 0
	idempotent := c.r.idem == nil || c.r.idem.Idempotent()
	for i := range fs {
		f := &fs[i]
		var spent *classTally
		if f.tallied {
			spent = &f.tally
		}
		v := decide(c.cfg, idempotent, n, c.maxAttempts+f.repaired, f.err, spent, f.discarded)
		f.end, f.limit = v.outcome, v.limit
		d.retryable = d.retryable || v.retryable
		if n != c.reported && answered(f.err, v.retryable) {
			// A retryable failure is a refusal; a rejected output, or a
			// failure the provider answered that no retry would mend (a
			// 400), is an answer it accepted.
			c.recordAttempt(ctx, n, !v.retryable || rejected(f.err))
		}
		if v.outcome != "" {
			continue
		}
		if spent != nil && v.class != "" {
			spent[v.class.index()]++
		}
		again++
		if v.hint > d.delay {
			d.delay, d.source = v.hint, backoffRetryAfter
		}
	}
	if again == 0 {
		d.outcome, d.limit = fs[0].end, fs[0].limit
		return d
	}
	return c.schedule(ctx, n, d, fs, again)
}

// schedule sets the delay before the next attempt of the failures that go
// again: the longest server hint among them, else the computed backoff;
// then each asks the budget (a rejected output does not), whose refusal
// ends it and whose longest wait replaces the delay when longer. A delay
// that would pass the caller's deadline ends them all, and one longer than
// the hand-off hands the call off.
func (c *call) schedule(ctx context.Context, n int, d decision, fs []failure, again int) decision {
	if d.source == 0 {
		d.delay, d.source = c.cfg.backoff(n, c.r.random()), backoffComputed
	}
	if pastDeadline(ctx, d.delay) {
		d.outcome = OutcomeDeadline
		return endAll(d, fs)
	}
	if d.run = c.runSpent(again); d.run != nil { // no wait for a retry the run cannot afford
		d.outcome = OutcomeNotRetryable
		return endAll(d, fs)
	}
	var wait time.Duration
	for i := range fs {
		f := &fs[i]
		if f.end != "" || rejected(f.err) {
			continue
		}
		f.turn = c.reserveRetry(ctx, n+1)
		if !f.turn.OK {
			f.end = OutcomeBudgetExhausted
			if again--; again == 0 {
				d.outcome = OutcomeBudgetExhausted
				return d
			}
			continue
		}
		wait = max(wait, f.turn.Delay)
	}
	if wait > d.delay {
		d.delay, d.source = wait, backoffBudget
		if pastDeadline(ctx, wait) {
			d.outcome = OutcomeDeadline
			giveBack(fs)
			return endAll(d, fs)
		}
	}
	if c.handOff(d.delay) {
		d.outcome = OutcomeHandedOff
		giveBack(fs)
		return endAll(d, fs)
	}
	return d
}

// giveBack gives the budget back the turns it reserved for fs's retries,
// which will not be made.
func giveBack(fs []failure) {
	for i := range fs {
		room.Cancel(fs[i].turn)
		fs[i].turn = core.Reservation{}
	}
}

// answered reports whether a failure, retryable or not by the rules, is an
// answer of the provider's that the budget counts: a retryable failure
// that did not happen on this side of the wire (a limiter's refusal, an
// open circuit: Local), a rejected output, or a failure that no retry
// would mend and that carries a status the provider answered with (a
// 400). A failure with neither (a panic, a bad input caught before the
// request) tells the budget nothing of the provider.
func answered(err error, retryable bool) bool {
	switch {
	case rejected(err):
		return true
	case errproto.Local(err):
		return false
	case retryable:
		return true
	}
	_, ok := errproto.Status(err)
	return ok
}

// pastDeadline reports whether an attempt after a wait of d could not start
// before the caller's deadline.
func pastDeadline(ctx context.Context, d time.Duration) bool {
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Add(d).Before(dl)
}

// endAll ends every failure still going again with d's outcome.
func endAll(d decision, fs []failure) decision {
	for i := range fs {
		if fs[i].end == "" {
			fs[i].end = d.outcome
		}
	}
	return d
}

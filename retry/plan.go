package retry

import (
	"context"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/room"
)

// decision is what follows a failed attempt: a backoff, or the outcome that
// ends the call (in a Batch, every item of the round).
type decision struct {
	outcome   Outcome // non-empty: stop with this outcome
	limit     Class   // the class whose MaxRetriesByClass bound ended it, if one did
	retryable bool    // a failure was classified retryable
	delay     time.Duration
	source    BackoffSource
	// held is set when the budget refused the retry of a call with a
	// deadline while it holds first attempts back: after the delay, the
	// retry waits its turn as a held first attempt would, and the call
	// ends, the budget exhausted, when no turn comes in the time it has.
	held bool
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
//  2. the rules (decide), for each failure; a retryable failure is
//     reported to the budget (unless it is a rejected output, or was
//     reported already), and one that goes again is counted in its
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
		if v.retryable && !rejected(f.err) && n != c.reported {
			c.recordAttempt(ctx, n, false)
		}
		if v.outcome != "" {
			continue
		}
		if spent != nil && v.class != "" {
			spent[v.class.index()]++
		}
		again++
		if v.hint > d.delay {
			d.delay, d.source = v.hint, BackoffRetryAfter
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
		d.delay, d.source = c.cfg.backoff(n, c.r.random()), BackoffComputed
	}
	if pastDeadline(ctx, d.delay) {
		d.outcome = OutcomeDeadline
		return endAll(d, fs)
	}
	var wait time.Duration
	for i := range fs {
		f := &fs[i]
		if f.end != "" || rejected(f.err) {
			continue
		}
		f.turn = c.reserveRetry(ctx)
		if !f.turn.OK && len(fs) == 1 && c.holdsRefused(ctx) {
			d.held = true
			continue
		}
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
		d.delay, d.source = wait, BackoffBudget
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

// holdsRefused reports whether a retry the budget refused waits for a turn
// in its hold instead: an Invoke's or a Stream's, with a deadline, while
// the recommended budget holds first attempts back (the provider fails
// most of them). Such a call's first attempt went while the provider was
// away; refused its retry, it would fail however soon the provider came
// back within its deadline, where a call that came a moment later, held,
// meets the return. Waiting in the hold, it goes when the hold lets it,
// at the rate the hold allows, which bounds the load it adds.
func (c *call) holdsRefused(ctx context.Context) bool {
	if c.r.adaptive == nil || c.method == callspan.Batch || !c.r.adaptive.Holding() {
		return false
	}
	_, ok := ctx.Deadline()
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

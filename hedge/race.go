package hedge

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/panics"
	"github.com/steadfast-go/steadfast/internal/run"
	"github.com/steadfast-go/steadfast/internal/usage"
)

// answer is one attempt's result: Invoke's output, or Stream's first chunk
// and the rest of its stream.
type answer struct {
	out     any
	err     error
	ch      <-chan any // Stream: the stream after its first chunk; nil for an empty one
	k       int        // the attempt's index, 0 for the first
	won     bool
	latency time.Duration
	cancel  context.CancelCauseFunc
}

// race makes the attempts of one call, each do(ctx, target) on a goroutine
// of its own, and returns the first success, or an *Error once every
// attempt failed or the caller's context ended.
func (r *Runnable) race(ctx context.Context, m callspan.Method, w *window, do func(context.Context, core.Runnable) answer) (answer, error) {
	start := time.Now()
	ctx, c := r.tel.begin(ctx, m)
	defer c.EndIfUnwinding()
	rc := raceCall{r: r, c: c, do: do, results: make(chan answer, r.cfg.MaxHedges+1), winner: -1}
	defer rc.cancelLosers()
	rc.launch(ctx)
	timer := time.NewTimer(r.delay(w))
	defer timer.Stop()
	var errs []error
	for {
		select {
		case a := <-rc.results:
			switch {
			case a.won:
				rc.winner = a.k
				if w != nil {
					// The first attempt's latency: its own when it won,
					// else at least the time the call took. Winners'
					// latencies alone would hide the slow answers that
					// hedging cut short, and pull the quantile down.
					lat := a.latency
					if a.k > 0 {
						lat = time.Since(start)
					}
					w.record(lat)
				}
				c.Succeed(attrIndex.Int(a.k), attrAttempts.Int(len(rc.cancels)))
				return a, nil
			case a.err == nil: // a success that lost: the winner's is on its way
				continue
			}
			errs = append(errs, a.err)
			if rc.more() && rc.allowed(ctx) { // a failure sends the next hedge at once
				rc.launch(ctx)
				timer.Reset(r.delay(w))
			} else if len(errs) == len(rc.cancels) {
				return answer{}, c.fail(&Error{Errs: errs}, len(rc.cancels))
			}
		case <-timer.C:
			if rc.more() && rc.allowed(ctx) {
				rc.launch(ctx)
				timer.Reset(r.delay(w))
			}
		case <-ctx.Done():
			return answer{}, c.fail(&Error{Errs: append(errs, ctx.Err())}, len(rc.cancels))
		}
	}
}

// raceCall is the state of one race.
type raceCall struct {
	r       *Runnable
	c       *call
	do      func(context.Context, core.Runnable) answer
	results chan answer // buffered for every attempt: none ever blocks on it
	won     atomic.Bool
	cancels []context.CancelCauseFunc
	winner  int // the winning attempt's index, -1 until one wins
}

// more reports whether the call may make another attempt.
func (rc *raceCall) more() bool { return len(rc.cancels) <= rc.r.cfg.MaxHedges }

// allowed asks the budget, if any, for a hedge.
func (rc *raceCall) allowed(ctx context.Context) bool {
	if b := rc.r.budget; b != nil {
		if !b.Reserve(ctx, len(rc.cancels)+1, 0).OK { // a hedge is a retry's extra request
			rc.c.refused()
			return false
		}
	}
	return true
}

// launch starts the next attempt on a goroutine of its own; it ends when
// its call returns, which a lost attempt's cancellation hastens.
func (rc *raceCall) launch(ctx context.Context) {
	k := len(rc.cancels)
	actx, cancel := context.WithCancelCause(ctx)
	rc.cancels = append(rc.cancels, cancel)
	actx, span := rc.c.attemptSpan(actx, k)
	actx, tokens := usage.Sub(actx)            // a loser's tokens are thrown away
	actx, ticket, refused := run.Take(actx, 1) // a hedge's request is a call of the run's
	target := rc.r.targets[k%len(rc.r.targets)]
	start := time.Now()
	go func() {
		a := answer{err: refused}
		if refused == nil {
			a = rc.attempt(actx, target)
			ticket.Settle(a.err)
		}
		a.k, a.latency, a.cancel = k, time.Since(start), cancel
		a.won = a.err == nil && rc.won.CompareAndSwap(false, true)
		if !a.won {
			cancel(errLost) // a loser's stream stops before any chunk is read
			tokens.Discard()
		}
		rc.c.endAttempt(actx, span, a)
		rc.results <- a
	}()
}

// attempt runs one attempt; a panic there, on a goroutine of the hedge's
// own, is the attempt's failure.
func (rc *raceCall) attempt(ctx context.Context, target core.Runnable) (a answer) {
	defer func() {
		if v := recover(); v != nil {
			a = answer{err: panics.Recovered(v)}
		}
	}()
	return rc.do(ctx, target)
}

// cancelLosers cancels every attempt but the winner's, at once.
func (rc *raceCall) cancelLosers() {
	for k, cancel := range rc.cancels {
		if k != rc.winner {
			cancel(errLost)
		}
	}
}

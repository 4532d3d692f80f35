// Package room is how a steadfast layer waits for room that a
// core.Reservation names: a token bucket's (ratelimit), a provider's
// headers' (internal/pace), a pool deployment's, a retry budget's pacing
// and the fleet's Redis share all answer "may it go now, and if not,
// when?" as golang.org/x/time/rate's Reservation does; the waits are
// bounded by one rule (Bound) and slept by one timer and select (Sleep,
// Timer), and a reservation not used is given back (Cancel). Waits for an
// event rather than for room keep timers of their own: a concurrency
// limit's queue (a permit given back), hedge's delay, a stream's chunk and
// attempt timeouts, a background response's polls.
package room

import (
	"context"
	"time"

	"github.com/steadfast-go/steadfast/core"
)

// Go is the reservation of a call that may go now and took nothing.
func Go() core.Reservation { return core.Reservation{OK: true} }

// After is the reservation of a call that may go after delay, or, with ok
// false, not at all (delay then says when room would come), taking
// nothing: the waits that Await serves take no room while they wait (a
// reset's, a deployment's).
func After(delay time.Duration, ok bool) core.Reservation {
	return core.Reservation{Delay: delay, OK: ok}
}

// Cancel gives back what r took, if anything.
func Cancel(r core.Reservation) {
	if r.Cancel != nil {
		r.Cancel()
	}
}

// Bound is the one rule that bounds every wait: the caller's deadline,
// then the layer's longest wait (its WithMaxWait), counted from Since,
// when the call began to wait (for Await, zero means when it first has
// to).
type Bound struct {
	Since time.Time
	Max   time.Duration
}

// Fits reports whether a wait of d from now keeps within b for a call
// whose context is ctx; when it does not, byDeadline says the caller's
// deadline, not b.Max, refuses it.
func (b Bound) Fits(ctx context.Context, now time.Time, d time.Duration) (ok, byDeadline bool) {
	if now.Sub(b.Since)+d > b.Max {
		return false, false
	}
	if dl, has := ctx.Deadline(); has && dl.Before(now.Add(d)) {
		return false, true
	}
	return true, false
}

// Sleep waits d, or until ctx is done, whose cause it then returns.
func Sleep(ctx context.Context, d time.Duration) error {
	var t Timer
	defer t.Stop()
	if !t.Sleep(ctx, d) {
		return context.Cause(ctx)
	}
	return nil
}

// Timer sleeps on one timer, made on the first wait and reset for each
// after it: a caller that waits many times (a retried call's backoffs)
// makes one. Its zero value is ready; Stop it when done.
type Timer struct{ t *time.Timer }

// Sleep waits d and reports true, or reports false when ctx ends first.
func (t *Timer) Sleep(ctx context.Context, d time.Duration) bool {
	if t.t == nil {
		t.t = time.NewTimer(d)
	} else {
		t.t.Reset(d) // safe on a fired or stopped timer since Go 1.23
	}
	select {
	case <-t.t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Stop releases the timer.
func (t *Timer) Stop() {
	if t.t != nil {
		t.t.Stop()
	}
}

// TooLong is a wait Await refused: Wait, counted from the bound's Since,
// would pass the bound; Deadline says the caller's deadline refused it.
type TooLong struct {
	Wait     time.Duration
	Deadline bool
}

// Await asks next, until it says the call may go now, sleeping what it
// says between: the wait for a reset, asked again when it ends, since
// others may have taken the room meanwhile. It returns how long it slept;
// a *TooLong, at once, when the wait next asks for would pass b (or next
// says the call may never go); or the context's cause when ctx ends
// during a wait. A reservation it does not wait out is cancelled.
func Await(ctx context.Context, b Bound, next func() core.Reservation) (time.Duration, error) {
	var t Timer
	defer t.Stop()
	var slept time.Duration
	for {
		r := next()
		if r.OK && r.Delay <= 0 {
			return slept, nil // the clock is read only by a call that waits
		}
		now := time.Now()
		if b.Since.IsZero() {
			b.Since = now
		}
		fits, byDeadline := b.Fits(ctx, now, r.Delay)
		if !r.OK || !fits {
			Cancel(r)
			return slept, &TooLong{Wait: now.Sub(b.Since) + r.Delay, Deadline: byDeadline}
		}
		if !t.Sleep(ctx, r.Delay) {
			Cancel(r)
			return slept, context.Cause(ctx)
		}
		slept += time.Since(now)
	}
}

func (e *TooLong) Error() string { return "room: the wait is too long" }

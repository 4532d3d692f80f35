package ratelimit

import (
	"context"
	"time"

	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
)

// A Backend holds the token bucket a Runnable draws from: InProcess keeps
// it in this process; the fleet module keeps one in Redis, shared by every
// process that names the same key. A Backend is safe for concurrent use.
type Backend interface {
	// Reserve takes n tokens (n ≥ 1) for a call that will wait at most
	// maxWait for them: its Delay is how long the call must wait before it
	// may go, zero when they are free now, and its Cancel, if any, gives
	// them back for a call that will not go after all. When the wait would
	// be longer than maxWait, it takes nothing and is not OK, its Delay the
	// wait; a bucket that never refills answers rate.InfDuration. A cost
	// above the bucket's burst, which no wait would admit, is refused with
	// a *LimitedError whose Burst is set.
	Reserve(ctx context.Context, n int, maxWait time.Duration) (core.Reservation, error)

	// Adjust corrects the tokens taken once a call's real cost is known,
	// or gives back those of a call that will not go: a positive delta
	// takes more at once, into debt if need be (later calls wait longer),
	// a negative one gives tokens back, up to a full bucket. It cannot
	// fail the call it settles, so it reports nothing: a backend that
	// cannot apply it in full does what it can. ctx is the call's, and may
	// be done already (a call cancelled while it waited gives its tokens
	// back): Adjust applies the change all the same.
	Adjust(ctx context.Context, delta int)
}

// inProcess is the Backend over a golang.org/x/time/rate token bucket in
// this process.
type inProcess struct {
	lim *rate.Limiter
}

// InProcess returns the Backend over a golang.org/x/time/rate token bucket
// in this process, lim, which calls share with whatever else uses lim. It
// returns nil when lim is nil, which New refuses.
func InProcess(lim *rate.Limiter) Backend {
	if lim == nil {
		return nil
	}
	return &inProcess{lim: lim}
}

// Reserve implements Backend. A wait's Cancel is the rate.Reservation's,
// which gives back what later reservations have not counted on.
func (l *inProcess) Reserve(_ context.Context, n int, maxWait time.Duration) (core.Reservation, error) {
	now := time.Now()
	if l.lim.AllowN(now, n) {
		return core.Reservation{OK: true}, nil
	}
	if burst := l.lim.Burst(); n > burst && l.lim.Limit() != rate.Inf {
		return core.Reservation{}, &LimitedError{Cost: n, Burst: burst}
	}
	res := l.lim.ReserveN(now, n)
	if !res.OK() {
		return core.Reservation{Delay: rate.InfDuration}, nil // a zero rate: the bucket never refills
	}
	wait := res.DelayFrom(now)
	if wait > maxWait {
		res.CancelAt(now)
		return core.Reservation{Delay: wait}, nil
	}
	return core.Reservation{Delay: wait, OK: true, Cancel: res.Cancel}, nil
}

// Adjust implements Backend. More tokens are reserved without waiting, at
// most a burst at a time, so the bucket goes into debt. Tokens given back
// are a reservation of a negative count, which rate.Limiter adds to the
// bucket and its next refill caps at the burst: behaviour that
// rate.Limiter does not document, and that TestInProcessAdjust pins.
func (l *inProcess) Adjust(_ context.Context, delta int) {
	now := time.Now()
	if delta < 0 {
		l.lim.ReserveN(now, delta)
		return
	}
	burst := l.lim.Burst()
	if burst <= 0 {
		return
	}
	for delta > 0 {
		n := min(delta, burst)
		l.lim.ReserveN(now, n)
		delta -= n
	}
}

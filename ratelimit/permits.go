package ratelimit

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/steadfast-go/steadfast/internal/room"
)

// permits are a Concurrency's calls in flight, its limit and the calls
// waiting for room, by class.
type permits struct {
	mu sync.Mutex
	a  aimd
	// shared, when set, keeps the limit: a mirrors its share, and a's
	// own arithmetic runs only while alone (the store unreachable).
	shared SharedLimit
	alone  bool
	// moved, when set, is told the limit whenever the share changes it.
	moved    func(limit float64)
	inflight float64
	// reach is as far as the calls in flight may go before another ends:
	// each end moves it up by that call's cost, to the limit at most, and
	// a cut brings it down to the limit. Room a raise adds thus opens a
	// call at a time as calls end, as a window grows by acknowledgements:
	// a raise past the capacity meets one 429, not one for each call it
	// let go at once, and a provider that refuses concurrency rising too
	// fast sees it rise at the pace of its answers.
	reach float64
	// older is the cost in flight of calls admitted before the last cut.
	// Until they have ended, reach does not grow: an end lets only its
	// replacement go. A cut of a shared limit takes effect as each
	// replica's calls end, and a replica that grew into room another has
	// not yet given up would meet a 429, and cut the limit again.
	older float64
	// lone is the wait after a call refused with nothing else in flight,
	// when no end will come to open the room again: from the time the
	// refusal took, doubling while they go on, to loneMax; resume is when
	// it ends, and wake lets the waiting calls go then.
	lone   time.Duration
	resume time.Time
	wake   *time.Timer
	queue  []*waiter // in arrival order
	// starve is ConcurrencyConfig.MaxStarvation; a waiting call moves a
	// class up each half of it.
	starve time.Duration
	// done and since measure the cost answered per second, for the wait a
	// queued call can expect: rate, over windows of a second or more.
	done  float64
	since time.Time
	rate  float64
}

// waiter is a call waiting for room.
type waiter struct {
	cost  float64
	prio  Priority
	since time.Time
	ready chan struct{} // closed when granted
	grant grant
}

// grant is a call's permit: what it took, and the limit's state when it
// was admitted, and when.
type grant struct {
	cost      float64
	epoch     uint64
	saturated bool
	at        time.Time
}

// loneMax is the longest wait after refusals with nothing else in flight
// (a Retry-After longer than it is waited in full).
const loneMax = time.Second

// take admits a call of cost now, or queues it and waits for room
// within b: the caller's deadline and MaxWait. A call whose expected wait
// is past b is refused at once with a *LimitedError, and so is one whose
// wait runs out; a call whose context ends returns its cause. A cost
// above the largest limit never fits.
func (p *permits) take(ctx context.Context, cost float64, prio Priority, b room.Bound) (grant, error) {
	now := time.Now()
	p.mu.Lock()
	if p.refresh() {
		p.dispatch(now)
	}
	if cost > p.a.max {
		p.mu.Unlock()
		return grant{}, &permitError{cost: cost, max: p.a.max}
	}
	if len(p.queue) == 0 && p.fits(cost, now) {
		g := p.admit(cost, now)
		p.mu.Unlock()
		return g, nil
	}
	b.Since = now
	if wait, known := p.expected(cost, prio, now); known {
		if ok, byDeadline := b.Fits(ctx, now, wait); !ok {
			p.mu.Unlock()
			return grant{}, &LimitedError{Wait: wait, Deadline: byDeadline}
		}
	}
	w := &waiter{cost: cost, prio: prio, since: now, ready: make(chan struct{})}
	p.queue = append(p.queue, w)
	p.mu.Unlock()
	return p.await(ctx, w, b)
}

// await waits for w's grant until b's bound or ctx's end.
func (p *permits) await(ctx context.Context, w *waiter, b room.Bound) (grant, error) {
	bound, byDeadline := b.Max, false
	if dl, ok := ctx.Deadline(); ok {
		if d := time.Until(dl); d < bound {
			bound, byDeadline = d, true
		}
	}
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-w.ready:
		return w.grant, nil
	case <-ctx.Done():
	case <-t.C:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-w.ready: // granted as the wait ended
		if ctx.Err() == nil {
			return w.grant, nil
		}
		p.inflight = math.Max(0, p.inflight-w.grant.cost) // its call will not go: the room is the next's
		p.dispatch(time.Now())
	default:
		p.queue = slices.DeleteFunc(p.queue, func(x *waiter) bool { return x == w })
	}
	if ctx.Err() != nil {
		return grant{}, context.Cause(ctx)
	}
	return grant{}, &LimitedError{Wait: time.Since(w.since), Deadline: byDeadline}
}

// fits reports whether a call of cost may go at now: it fits in the
// limit, or nothing is in flight (a cost above a limit that was cut goes
// alone) and no wait after a lone refusal is running.
func (p *permits) fits(cost float64, now time.Time) bool {
	if p.inflight == 0 {
		return !now.Before(p.resume)
	}
	return p.inflight+cost <= math.Min(p.a.limit, p.reach)
}

// ended moves reach up by the cost of a call that ended, and down to the
// limit, which a cut may have lowered. An overload's room does not open
// again: the provider is full, and a call sent in its place would meet
// another 429 before the cut is known (a shared limit's cut comes back
// from the store an exchange later; a burst's later 429s find the cut
// made). Nor does reach grow while calls admitted before the last cut
// are in flight (older).
func (p *permits) ended(cost float64, overload bool) {
	switch {
	case overload:
		p.reach = math.Min(p.reach, math.Min(p.inflight, p.a.limit))
	case p.older > 0:
		p.reach = math.Min(p.reach, p.a.limit)
	default:
		p.reach = math.Min(p.reach+cost, p.a.limit)
	}
}

// admit takes cost of the limit for a call.
func (p *permits) admit(cost float64, now time.Time) grant {
	p.inflight += cost
	return grant{cost: cost, epoch: p.a.epoch, saturated: 2*p.inflight >= p.a.limit || len(p.queue) > 0, at: now}
}

// expected is the wait a call of cost and class prio can expect behind
// the waiting calls that go before it (of its class or a higher one, once
// aged), at the rate calls have been answered; known is false before any
// was.
func (p *permits) expected(cost float64, prio Priority, now time.Time) (time.Duration, bool) {
	if p.rate <= 0 {
		return 0, false
	}
	ahead := cost
	for _, w := range p.queue {
		if p.rank(w, now) <= float64(prio) {
			ahead += w.cost
		}
	}
	ahead -= p.a.limit - p.inflight
	return time.Duration(math.Max(0, ahead) / p.rate * float64(time.Second)), true
}

// give returns g's room with what its call's end said, and lets the
// calls it makes room for go. It reports whether the limit changed.
func (p *permits) give(g grant, o outcome) (limit float64, changed bool) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight = math.Max(0, p.inflight-g.cost)
	if g.epoch != p.a.epoch {
		p.older = math.Max(0, p.older-g.cost)
	}
	p.answered(now, g.cost)
	o.cost, o.epoch, o.saturated, o.inflight = g.cost, g.epoch, g.saturated, p.inflight
	p.refresh()
	shared := p.shared != nil && !p.alone
	if !shared {
		epoch := p.a.epoch
		changed = p.a.observe(o)
		if p.a.epoch != epoch {
			p.older = p.inflight
		}
	} else {
		p.a.sample(o.ttft, o.saturated) // the provider's base, for refused calls' waits, and for when the store is away
	}
	p.ended(g.cost, o.overload)
	p.refused(g, o, now)
	p.dispatch(now)
	if shared { // once the calls this end lets go are in flight too: the store weighs overloads against them
		p.shared.Observe(Outcome{Cost: o.cost, Overload: o.overload, Hint: o.hint, Clean: o.clean,
			TTFT: o.ttft, Epoch: o.epoch, Saturated: o.saturated, InFlight: p.inflight})
	}
	return p.a.limit, changed
}

// refresh takes the shared limit's share, if there is one, and reports
// whether the limit changed. While the store cannot be reached, the
// limit adapts alone from the last share. It runs under p.mu.
func (p *permits) refresh() bool {
	if p.shared == nil {
		return false
	}
	limit, epoch, ok := p.shared.Share()
	if p.alone = !ok; p.alone {
		return false
	}
	changed := limit != p.a.limit
	if epoch != p.a.epoch {
		p.older = p.inflight
	}
	p.a.limit, p.a.epoch = limit, epoch
	p.reach = math.Min(p.reach, limit)
	if changed && p.moved != nil {
		p.moved(limit)
	}
	return changed
}

// refused starts a wait after a call refused with nothing else in flight:
// no end will come to open the room, and a call sent at once would meet
// the same full provider (a replica whose share is one call, while the
// others' calls drain after a cut). It waits the hint, or as long as the
// refusal took, or the provider's time to a first chunk with no queue
// (a 429 that comes back faster than any answer says nothing of when a
// call will end), doubling while refusals go on; a clean answer ends
// that.
func (p *permits) refused(g grant, o outcome, now time.Time) {
	switch {
	case o.overload && p.inflight == 0:
		p.lone = max(o.hint, min(loneMax, max(now.Sub(g.at), p.a.base, 2*p.lone)))
		p.resume = now.Add(p.lone)
		if p.wake == nil {
			p.wake = time.AfterFunc(p.lone, p.woken)
		} else {
			p.wake.Reset(p.lone)
		}
	case o.clean:
		p.lone = 0
	}
}

// woken lets the calls waiting go once a wait after a lone refusal ends.
func (p *permits) woken() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dispatch(time.Now())
}

// answered counts cost answered at now, for the rate.
func (p *permits) answered(now time.Time, cost float64) {
	if p.since.IsZero() {
		p.since = now
	}
	p.done += cost
	if d := now.Sub(p.since); d >= time.Second {
		r := p.done / d.Seconds()
		if p.rate == 0 {
			p.rate = r
		} else {
			p.rate = (p.rate + r) / 2
		}
		p.done, p.since = 0, now
	}
}

// dispatch grants the waiting calls the limit has room for, best first;
// it stops at the first that does not fit, so that a large call is not
// passed over for ever by small ones.
func (p *permits) dispatch(now time.Time) {
	for len(p.queue) > 0 {
		i := p.next(now)
		w := p.queue[i]
		if !p.fits(w.cost, now) {
			return
		}
		p.queue = slices.Delete(p.queue, i, i+1)
		w.grant = p.admit(w.cost, now)
		w.grant.saturated = true
		close(w.ready)
	}
}

// next is the waiting call to go first: one that has waited MaxStarvation
// (the oldest), else the best class once aged (a class up per half of
// MaxStarvation waited), the oldest among equals.
func (p *permits) next(now time.Time) int {
	best, bestRank := 0, math.Inf(1)
	for i, w := range p.queue {
		if now.Sub(w.since) >= p.starve {
			return i
		}
		if rank := p.rank(w, now); rank < bestRank {
			best, bestRank = i, rank
		}
	}
	return best
}

// rank is w's place at now, lower first: its class, less one for each
// half of MaxStarvation it has waited (a batch call passes an
// interactive one that came with it only when it is about to starve);
// minus infinity once it has waited all of it.
func (p *permits) rank(w *waiter, now time.Time) float64 {
	waited := now.Sub(w.since)
	if waited >= p.starve {
		return math.Inf(-1)
	}
	return float64(w.prio) - float64(waited)/float64(p.starve/2)
}

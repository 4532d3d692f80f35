package storm

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// ErrOverloaded is the simulated provider's answer when it is over
// capacity, down, or collapsed: a 503, which every library retries.
var ErrOverloaded = &statusError{code: 503}

type statusError struct{ code int }

func (e *statusError) Error() string   { return "provider: overloaded (503)" }
func (e *statusError) StatusCode() int { return e.code }

// provider serves up to capacity requests a second (a token bucket) and
// fails everything during its outage window. When metastable, the outage
// is a trigger: the provider collapses (see collapse) and serves only
// CollapsedShare of its capacity until it has worked off its backlog.
type provider struct {
	start     time.Time
	sc        Scenario
	healthy   *rate.Limiter
	collapsed *rate.Limiter
	mu        sync.Mutex
	collapse  collapse
	attempts  []int // attempts per Interval since start, for the plots
}

// collapse is a metastable provider's state, after the queueing failure of
// the metastable-failure literature: while it is down, every request that
// reaches it joins a backlog of work whose callers have mostly given up,
// and it works the backlog off at its capacity. During the trigger it works
// nothing off. It recovers once the backlog is empty, so it recovers in
// backlog ÷ (capacity − offered load): slowly under the load of no
// retrying, never while retries keep the load above its capacity, and soon
// when its clients hold their calls back.
type collapse struct {
	down        bool
	backlog     float64       // requests' worth of work
	drainedAt   time.Duration // when backlog was last worked off
	recoveredAt time.Duration // -1 until it recovers
}

func newProvider(sc Scenario, start time.Time) *provider {
	burst := max(int(sc.Capacity/100), 1) // 10ms worth
	return &provider{
		start:     start,
		sc:        sc,
		healthy:   rate.NewLimiter(rate.Limit(sc.Capacity), burst),
		collapsed: rate.NewLimiter(rate.Limit(sc.Capacity*sc.CollapsedShare), max(int(sc.Capacity*sc.CollapsedShare/100), 1)),
		collapse:  collapse{recoveredAt: -1},
	}
}

// arrive counts a request arriving at now (at since the start) and tells
// whether the provider is in its outage window, and whether it is
// collapsed.
func (p *provider) arrive(now time.Time, at time.Duration) (outage, down bool) {
	sc := p.sc
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count(at)
	outage = at >= sc.OutageStart && at < sc.OutageEnd
	if !sc.Metastable {
		return outage, false
	}
	p.drain(at, outage)
	c := &p.collapse
	if outage {
		c.down = true
	}
	if c.down {
		c.backlog++
	}
	return outage, c.down
}

// drain works off the backlog of a collapsed provider up to at, outside the
// trigger, under p.mu.
func (p *provider) drain(at time.Duration, outage bool) {
	c, sc := &p.collapse, p.sc
	if !c.down || outage {
		return
	}
	from := max(c.drainedAt, sc.OutageEnd)
	if worked := sc.Capacity * (at - from).Seconds(); worked >= c.backlog {
		c.down, c.recoveredAt = false, from+time.Duration(c.backlog/sc.Capacity*float64(time.Second))
		c.backlog = 0
	} else if worked > 0 {
		c.backlog -= worked
	}
	c.drainedAt = max(at, from)
}

// request is one attempt reaching the provider, answered after the
// scenario's round trip.
func (p *provider) request(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := p.answer(time.Now())
	if d := p.sc.RoundTrip; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}

// answer is the provider's answer to an attempt that reaches it at now.
func (p *provider) answer(now time.Time) error {
	outage, down := p.arrive(now, now.Sub(p.start))
	switch {
	case outage:
		return ErrOverloaded
	case down:
		if p.collapsed.AllowN(now, 1) {
			return nil
		}
		return ErrOverloaded
	case p.healthy.AllowN(now, 1):
		return nil
	}
	return ErrOverloaded
}

// count records an attempt at time at (since the start), under p.mu.
func (p *provider) count(at time.Duration) {
	i := int(at / Interval)
	for len(p.attempts) <= i {
		p.attempts = append(p.attempts, 0)
	}
	p.attempts[i]++
}

func (p *provider) down() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.collapse.down
}

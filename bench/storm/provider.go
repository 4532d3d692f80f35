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
// fails everything during its outage window. When metastable, it
// collapses (see collapse) and serves CollapsedShare of its capacity until
// its load has stayed low for a while.
type provider struct {
	start     time.Time
	sc        Scenario
	healthy   *rate.Limiter
	collapsed *rate.Limiter
	mu        sync.Mutex
	collapse  collapse
	attempts  []int // attempts per Interval since start, for the plots
}

// collapse is a metastable provider's state, after the metastable-failure
// literature's model with hysteresis: the provider collapses as soon as
// one window (Interval) holds more attempts than it can serve, or during
// its outage window (the trigger); collapsed, it serves CollapsedShare of
// its capacity (ten times slower); it is healthy again once, after the
// trigger, every window for Hysteresis has held at most RecoverShare of
// its capacity. A load at its capacity keeps it down; only a load below
// RecoverShare of it brings it back.
type collapse struct {
	down        bool
	quietFrom   int           // the first window of the current run of quiet ones
	recoveredAt time.Duration // -1 until it recovers (the last time it did)
}

// Hysteresis is how long a collapsed provider's load must stay low before
// it is healthy again.
const Hysteresis = time.Second

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

// perWindow is how many attempts a window holds at the provider's
// capacity.
func (sc Scenario) perWindow() float64 { return sc.Capacity * Interval.Seconds() }

// recoverShare is the share of its capacity under which a collapsed
// provider's load must stay.
func (sc Scenario) recoverShare() float64 {
	if sc.RecoverShare > 0 {
		return sc.RecoverShare
	}
	return 1
}

// arrive counts a request arriving at now (at since the start) and tells
// whether the provider is in its outage window, and whether it is
// collapsed.
func (p *provider) arrive(now time.Time, at time.Duration) (outage, down bool) {
	sc := p.sc
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.count(at)
	outage = at >= sc.OutageStart && at < sc.OutageEnd
	if !sc.Metastable {
		return outage, false
	}
	p.settle(w)
	c := &p.collapse
	if outage || float64(p.attempts[w]) > sc.perWindow() {
		c.down, c.quietFrom = true, w+1
	}
	return outage, c.down
}

// settle ends a collapse whose windows before w, since the trigger, have
// held little enough for Hysteresis, under p.mu.
func (p *provider) settle(w int) {
	c, sc := &p.collapse, p.sc
	if !c.down {
		return
	}
	limit := sc.recoverShare() * sc.perWindow()
	c.quietFrom = max(c.quietFrom, int((sc.OutageEnd+Interval-1)/Interval))
	for i := c.quietFrom; i < w && i < len(p.attempts); i++ {
		if float64(p.attempts[i]) > limit {
			c.quietFrom = i + 1
		}
	}
	if hold := int(Hysteresis / Interval); w-c.quietFrom >= hold {
		c.down = false
		c.recoveredAt = time.Duration(c.quietFrom+hold) * Interval
	}
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

// count records an attempt at time at (since the start) and returns its
// window, under p.mu.
func (p *provider) count(at time.Duration) int {
	i := int(at / Interval)
	for len(p.attempts) <= i {
		p.attempts = append(p.attempts, 0)
	}
	p.attempts[i]++
	return i
}

func (p *provider) down() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.collapse.down
}

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

// provider serves up to capacity requests a second (a token bucket), fails
// everything during its outage window and, when metastable, stays collapsed
// after the outage, serving only collapsedCapacity a second, until the
// offered load over the last window falls below capacity.
type provider struct {
	start       time.Time
	sc          Scenario
	healthy     *rate.Limiter
	collapsed   *rate.Limiter
	mu          sync.Mutex
	isDown      bool      // collapsed (metastable scenarios only)
	recentLoad  []int     // attempts per bucket over the last window
	bucketAt    time.Time // start of the current bucket
	attempts    []int     // attempts per Interval since start, for the plots
	recoveredAt time.Duration
}

const (
	loadWindow  = 100 * time.Millisecond // the span over which offered load is judged
	loadBuckets = 10
)

func newProvider(sc Scenario, start time.Time) *provider {
	burst := max(int(sc.Capacity/100), 1) // 10ms worth
	p := &provider{
		start:       start,
		sc:          sc,
		healthy:     rate.NewLimiter(rate.Limit(sc.Capacity), burst),
		collapsed:   rate.NewLimiter(rate.Limit(sc.Capacity*sc.CollapsedShare), max(int(sc.Capacity*sc.CollapsedShare/100), 1)),
		recentLoad:  make([]int, loadBuckets),
		bucketAt:    start,
		recoveredAt: -1,
	}
	return p
}

// request is one attempt reaching the provider.
func (p *provider) request(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := time.Now()
	at := now.Sub(p.start)
	p.mu.Lock()
	p.count(now, at)
	outage := at >= p.sc.OutageStart && at < p.sc.OutageEnd
	if outage && p.sc.Metastable {
		p.isDown = true
	}
	if p.isDown && !outage && p.offeredPerSecond() < p.sc.Capacity {
		p.isDown = false
		p.recoveredAt = at
	}
	down := p.isDown
	p.mu.Unlock()

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
func (p *provider) count(now time.Time, at time.Duration) {
	bucket := loadWindow / loadBuckets
	for now.Sub(p.bucketAt) >= bucket {
		copy(p.recentLoad, p.recentLoad[1:])
		p.recentLoad[len(p.recentLoad)-1] = 0
		p.bucketAt = p.bucketAt.Add(bucket)
	}
	p.recentLoad[len(p.recentLoad)-1]++
	i := int(at / Interval)
	for len(p.attempts) <= i {
		p.attempts = append(p.attempts, 0)
	}
	p.attempts[i]++
}

// offeredPerSecond is the attempts of the last window, per second, under
// p.mu.
func (p *provider) offeredPerSecond() float64 {
	n := 0
	for _, c := range p.recentLoad {
		n += c
	}
	return float64(n) / loadWindow.Seconds()
}

func (p *provider) down() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.isDown
}

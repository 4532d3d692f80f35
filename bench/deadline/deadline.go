// Package deadline runs retry storms in which every call has a deadline of
// its own, and success counts only within it: how users run a retry layer.
// Each shape is played for every library, in real time, with the same
// seeded arrivals.
package deadline

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/bench"
)

// errBusy is the provider's refusal: a 503, which every library retries.
var errBusy = &busyError{}

type busyError struct{}

func (*busyError) Error() string   { return "provider: busy (503)" }
func (*busyError) StatusCode() int { return 503 }

// Shape is one storm: a provider and the load offered to it.
type Shape struct {
	Name     string
	Duration time.Duration // calls start during it
	// Slots and Service make a provider of Slots concurrent requests of
	// Service each; a request that finds every slot busy fails at once.
	Slots   int
	Service time.Duration
	// Bucket, when set, makes the provider a token bucket instead
	// (requests a second, and its burst): a request with no token fails
	// at once, one with a token takes Service.
	Bucket      rate.Limit
	BucketBurst int
	// Closed load: Clients, each calling, waiting for its answer, then
	// thinking a time uniform in [0, MaxThink) (Think, when set: an
	// exponential of that mean). First calls at once (Herd) or spread
	// over Spread. From SpikeStart to SpikeEnd think times are divided by
	// SpikeFactor.
	Clients              int
	MaxThink, Think      time.Duration
	Herd                 bool
	Spread               time.Duration
	SpikeStart, SpikeEnd time.Duration
	SpikeFactor          float64
	// Open load, instead: Rate calls a second (Poisson), times SpikeFactor
	// from SpikeStart to SpikeEnd.
	Rate float64
	// OutageStart and OutageEnd bound a window in which every request
	// fails at once.
	OutageStart, OutageEnd time.Duration
	// Metastable: the provider collapses as soon as a window of 100 ms
	// holds more attempts than its capacity (Slots requests of Service
	// each); while collapsed each admitted attempt takes 10 × Service,
	// the excess refused at once; it is healthy again once every window
	// for a whole second has held at most its capacity.
	Metastable bool
}

// window is the provider's accounting window.
const window = 100 * time.Millisecond

// capacity is a slotted provider's attempts a window.
func (s Shape) capacity() int { return int(float64(s.Slots) * float64(window) / float64(s.Service)) }

// Result is one library's run of one shape under one deadline.
type Result struct {
	Library    string
	Calls      int
	Success    int // within the deadline
	Attempts   int
	OutageAtts int           // attempts made during the outage
	P99        time.Duration // of the successful calls
	Served     float64       // successful calls a second of the run
	// Recovered is, for a metastable shape, how long after the spike's end
	// the first one-second window whose successes were at least 95 % of
	// min(capacity, attempts) began; -1 when none did.
	Recovered time.Duration
}

// SuccessShare is Success / Calls.
func (r Result) SuccessShare() float64 { return float64(r.Success) / float64(max(r.Calls, 1)) }

// AttemptsPerCall is Attempts / Calls.
func (r Result) AttemptsPerCall() float64 { return float64(r.Attempts) / float64(max(r.Calls, 1)) }

// provider is the simulated provider of a run.
type provider struct {
	s     Shape
	start time.Time
	inUse atomic.Int32
	lim   *rate.Limiter

	mu        sync.Mutex
	windows   []int // attempts per window since start
	okWindows []int // successes per window (by when the attempt began)
	collapsed bool
	quietFrom int // the first window of the current run of quiet ones
	outage    int
}

func newProvider(s Shape, start time.Time) *provider {
	p := &provider{s: s, start: start}
	if s.Bucket > 0 {
		p.lim = rate.NewLimiter(s.Bucket, s.BucketBurst)
	}
	return p
}

// arrive counts an attempt and says whether the provider is down (an
// outage) and whether it is collapsed.
func (p *provider) arrive(now time.Time) (w int, outage, collapsed bool) {
	at := now.Sub(p.start)
	w = int(at / window)
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.windows) <= w {
		p.windows, p.okWindows = append(p.windows, 0), append(p.okWindows, 0)
	}
	p.windows[w]++
	outage = at >= p.s.OutageStart && at < p.s.OutageEnd
	if outage {
		p.outage++
	}
	if p.s.Metastable {
		c := p.s.capacity()
		// Healthy again once every window of a whole second held at most
		// the capacity: the windows before w are complete.
		if p.collapsed {
			for i := p.quietFrom; i < w; i++ {
				if p.windows[i] > c {
					p.quietFrom = i + 1
				}
			}
			if w-p.quietFrom >= int(time.Second/window) {
				p.collapsed = false
			}
		}
		if !p.collapsed && p.windows[w] > c {
			p.collapsed, p.quietFrom = true, w+1
		}
	}
	return w, outage, p.collapsed
}

func (p *provider) succeeded(w int) {
	p.mu.Lock()
	p.okWindows[w]++
	p.mu.Unlock()
}

// request is one attempt.
func (p *provider) request(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w, outage, collapsed := p.arrive(time.Now())
	if outage {
		return errBusy
	}
	service := p.s.Service
	if p.lim != nil {
		if !p.lim.Allow() {
			return errBusy
		}
	} else if collapsed || !p.s.Metastable {
		// A metastable provider serves every attempt while healthy (its
		// capacity only says when it collapses); collapsed, it admits
		// its slots' worth at ten times the service time and refuses
		// the excess at once.
		if collapsed {
			service *= 10
		}
		if p.inUse.Add(1) > int32(p.s.Slots) {
			p.inUse.Add(-1)
			return errBusy
		}
		defer p.inUse.Add(-1)
	}
	if err := bench.Sleep(ctx, service); err != nil {
		return err
	}
	p.succeeded(w)
	return nil
}

// Run plays s for r, each call with its own deadline (0: none).
func Run(ctx context.Context, s Shape, r bench.Retrier, deadline time.Duration, seed uint64) Result {
	start := time.Now()
	p := newProvider(s, start)
	var (
		mu      sync.Mutex
		okTimes []time.Duration
		calls   atomic.Int64
		success atomic.Int64
		wg      sync.WaitGroup
	)
	call := func() {
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if deadline > 0 {
			cctx, cancel = context.WithTimeout(ctx, deadline)
		}
		began := time.Now()
		err := r.Do(cctx, p.request)
		took := time.Since(began)
		cancel()
		calls.Add(1)
		if err == nil && (deadline == 0 || took <= deadline) {
			success.Add(1)
			mu.Lock()
			okTimes = append(okTimes, took)
			mu.Unlock()
		}
	}
	if s.Clients > 0 {
		for c := range s.Clients {
			rng := rand.New(rand.NewPCG(seed, uint64(c)))
			wg.Go(func() {
				first := time.Duration(0)
				if !s.Herd && s.Spread > 0 {
					first = time.Duration(rng.Int64N(int64(s.Spread)))
				}
				if bench.Sleep(ctx, first) != nil {
					return
				}
				for ctx.Err() == nil && time.Since(start) < s.Duration {
					call()
					if bench.Sleep(ctx, s.think(rng, time.Since(start))) != nil {
						return
					}
				}
			})
		}
	} else {
		rng := rand.New(rand.NewPCG(seed, 0))
		for at := time.Duration(0); at < s.Duration; {
			r := s.Rate
			if at >= s.SpikeStart && at < s.SpikeEnd {
				r *= s.SpikeFactor
			}
			at += time.Duration(rng.ExpFloat64() / r * float64(time.Second))
			if bench.Sleep(ctx, time.Until(start.Add(at))) != nil {
				break
			}
			wg.Go(call)
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	res := Result{Library: r.Name(), Calls: int(calls.Load()), Success: int(success.Load())}
	p.mu.Lock()
	for _, n := range p.windows {
		res.Attempts += n
	}
	res.OutageAtts = p.outage
	res.Recovered = p.recovered()
	p.mu.Unlock()
	slices.Sort(okTimes)
	if len(okTimes) > 0 {
		res.P99 = okTimes[min(len(okTimes)-1, len(okTimes)*99/100)]
	}
	res.Served = float64(res.Success) / elapsed.Seconds()
	return res
}

// think is a client's think time at t.
func (s Shape) think(rng *rand.Rand, t time.Duration) time.Duration {
	var d time.Duration
	if s.Think > 0 {
		d = time.Duration(rng.ExpFloat64() * float64(s.Think))
	} else {
		d = time.Duration(rng.Int64N(int64(s.MaxThink)))
	}
	if s.SpikeFactor > 0 && t >= s.SpikeStart && t < s.SpikeEnd {
		d = time.Duration(float64(d) / s.SpikeFactor)
	}
	return d
}

// recovered is how long after the spike's (or outage's) end the first
// one-second window began whose successes were at least 95 % of
// min(capacity, attempts), -1 when none did. It runs under p.mu.
func (p *provider) recovered() time.Duration {
	end := max(p.s.SpikeEnd, p.s.OutageEnd)
	if end == 0 || p.s.Slots == 0 {
		return -1
	}
	per := int(time.Second / window)
	c := p.s.capacity() * per
	for w := int(end / window); w+per <= len(p.windows); w++ {
		var att, ok int
		for i := w; i < w+per; i++ {
			att += p.windows[i]
			ok += p.okWindows[i]
		}
		if float64(ok) >= 0.95*float64(min(c, att)) {
			return time.Duration(w)*window - end
		}
	}
	return -1
}

// Service is the service time of every shape's provider: the deadlines are
// multiples of it.
const Service = 20 * time.Millisecond

// Deadlines are the per-call deadlines every shape is run with: none, 12×
// and 50× the service time.
var Deadlines = []time.Duration{0, 12 * Service, 50 * Service}

// Shapes are the storms of issue #46's harness.
var Shapes = []Shape{
	{Name: "overload", Duration: 4 * time.Second, Slots: 2, Service: Service,
		Clients: 25, Think: 250 * time.Millisecond, Herd: true},
	{Name: "spike", Duration: 6 * time.Second, Bucket: 1000, BucketBurst: 50, Service: Service,
		Rate: 600, SpikeStart: 2 * time.Second, SpikeEnd: 4 * time.Second, SpikeFactor: 4},
	{Name: "collapse", Duration: 8 * time.Second, Slots: 5, Service: Service, Metastable: true,
		Clients: 50, MaxThink: 800 * time.Millisecond, Spread: 800 * time.Millisecond,
		SpikeStart: 2 * time.Second, SpikeEnd: 3 * time.Second, SpikeFactor: 4},
	{Name: "outage", Duration: 9 * time.Second, Slots: 5, Service: Service,
		Clients: 50, MaxThink: 800 * time.Millisecond, Spread: 800 * time.Millisecond,
		OutageStart: 2 * time.Second, OutageEnd: 7 * time.Second},
}

// Policy is every library's: 5 attempts, 10 ms doubling to 1 s, 50 % jitter.
var Policy = bench.Policy{Attempts: 5, Initial: 10 * time.Millisecond, Factor: 2, Max: time.Second, Jitter: 0.5}

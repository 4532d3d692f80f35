// Package deployments is the many-deployments scenario of bench/README.md:
// one model served by three deployments of equal capacity, one of which
// answers 429 with a Retry-After for a while and one of which is three
// times slower, with a prompt cache that makes a session's call faster on
// the deployment that served it last. The same open-loop load goes through
// a retry layer around one deployment, around round-robin over the three,
// around the pool, and around the pool with session affinity.
package deployments

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	mnoop "go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/bench"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
)

// Scenario is the shape of the deployments and of the load.
type Scenario struct {
	Slots    int           // calls a deployment serves at once; the slow one has three times as many, for equal capacity
	Latency  time.Duration // a call's time on a healthy deployment, ±20 %; three times on the slow one
	Load     float64       // the load offered, as a share of the three deployments' capacity
	Run      time.Duration
	Throttle [2]time.Duration // when the throttled deployment answers 429, from the start
	Hint     time.Duration    // its Retry-After
	Sessions int
	Seed     uint64
}

// Default is the scenario of the committed results.
var Default = Scenario{
	Slots: 10, Latency: 20 * time.Millisecond, Load: 0.6, Run: 10 * time.Second,
	Throttle: [2]time.Duration{2 * time.Second, 7 * time.Second}, Hint: 2 * time.Second,
	Sessions: 200, Seed: 1,
}

// cacheSpeedUp is what a warm prompt cache saves: a session's call is 40 %
// faster on the deployment that served it within the last minute.
const (
	cacheSpeedUp = 0.6
	cacheTTL     = time.Minute
)

// errBusy is a deployment whose slots are all taken: retryable, no hint.
var errBusy = &statusError{code: 503}

type statusError struct {
	code  int
	after time.Duration
}

func (e *statusError) Error() string             { return fmt.Sprintf("deployment: %d", e.code) }
func (e *statusError) StatusCode() int           { return e.code }
func (e *statusError) RetryAfter() time.Duration { return e.after }

// call is a call's input: its session.
type call struct{ session int }

// deployment is one simulated deployment.
type deployment struct {
	name      string
	slots     chan struct{}
	slow      float64 // latency multiple
	throttled bool    // answers 429 in the throttle window
	sc        Scenario
	start     time.Time
	cache     *cache
	requests  atomic.Int64
	during    atomic.Int64 // requests in the throttle window
	served    atomic.Int64 // calls answered
	mu        sync.Mutex
	rng       *rand.Rand
}

func (d *deployment) Invoke(ctx context.Context, in any, _ ...core.Option) (any, error) {
	d.requests.Add(1)
	since := time.Since(d.start)
	if d.throttled && since >= d.sc.Throttle[0] && since < d.sc.Throttle[1] {
		d.during.Add(1)
		return nil, &statusError{code: 429, after: d.sc.Hint}
	}
	select {
	case d.slots <- struct{}{}:
	default:
		return nil, errBusy
	}
	defer func() { <-d.slots }()
	d.mu.Lock()
	lat := float64(d.sc.Latency) * d.slow * (0.8 + 0.4*d.rng.Float64())
	d.mu.Unlock()
	s := in.(call).session
	if d.cache.hit(s, d.name) {
		lat *= cacheSpeedUp
	}
	if err := bench.Sleep(ctx, time.Duration(lat)); err != nil {
		return nil, err
	}
	d.cache.store(s, d.name)
	d.served.Add(1)
	return d.name, nil
}

func (d *deployment) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(d.Invoke).Batch(ctx, in, opts...)
}

func (d *deployment) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(d.Invoke).Stream(ctx, in, opts...)
}

// cache is the provider's prompt cache: which deployment served each
// session last, and when.
type cache struct {
	mu           sync.Mutex
	last         map[int]served
	hits, served int
}

type served struct {
	on string
	at time.Time
}

func (c *cache) hit(s int, on string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.last[s]
	hit := ok && l.on == on && time.Since(l.at) < cacheTTL
	c.served++
	if hit {
		c.hits++
	}
	return hit
}

func (c *cache) store(s int, on string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last[s] = served{on, time.Now()}
}

// Variant is one way of calling the deployments.
type Variant struct {
	Name    string
	Healthy bool // every deployment healthy and fast: the p99 reference
	build   func(ds []*deployment) (core.Runnable, error)
}

// Variants are the four compared, and the healthy reference.
var Variants = []Variant{
	{"one deployment (3× the slots), retry", false, func(ds []*deployment) (core.Runnable, error) {
		return ds[0], nil
	}},
	{"round-robin over 3, retry", false, func(ds []*deployment) (core.Runnable, error) {
		return &roundRobin{ds: ds}, nil
	}},
	{"pool, retry", false, func(ds []*deployment) (core.Runnable, error) { return newPool(ds, false) }},
	{"pool with affinity, retry", false, func(ds []*deployment) (core.Runnable, error) { return newPool(ds, true) }},
	{"pool, retry; every deployment healthy", true, func(ds []*deployment) (core.Runnable, error) { return newPool(ds, false) }},
}

func newPool(ds []*deployment, affinity bool) (core.Runnable, error) {
	var pds []pool.Deployment
	for _, d := range ds {
		pds = append(pds, pool.Deployment{Name: d.name, Runnable: d})
	}
	opts := []pool.Option{pool.WithMeterProvider(mnoop.NewMeterProvider())}
	if affinity {
		opts = append(opts, pool.WithAffinity(func(_ context.Context, in any) string {
			return fmt.Sprint(in.(call).session)
		}))
	}
	return pool.New(pds, opts...)
}

// roundRobin sends each call to the next deployment in turn.
type roundRobin struct {
	ds   []*deployment
	next atomic.Int64
}

func (r *roundRobin) Invoke(ctx context.Context, in any, opts ...core.Option) (any, error) {
	return r.ds[int(r.next.Add(1))%len(r.ds)].Invoke(ctx, in, opts...)
}

func (r *roundRobin) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(r.Invoke).Batch(ctx, in, opts...)
}

func (r *roundRobin) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(r.Invoke).Stream(ctx, in, opts...)
}

// Result is one variant's run.
type Result struct {
	Name              string
	Calls, OK         int
	P50, P99, Mean    time.Duration
	Requests          int64
	ThrottledRequests int64   // requests the throttled deployment got while throttled
	Hints             int64   // hint periods in the throttle window
	SessionStickiness float64 // share of a session's calls, while healthy, on its most used deployment
	CacheHits         float64 // share of the calls served with a warm prompt cache
	SlowShare         float64 // share of the calls served by the slow deployment
	bySession         []map[string]int
	durations         []time.Duration
	mu                sync.Mutex // guards bySession and durations
}

// Success is the share of calls that succeeded.
func (r *Result) Success() float64 { return float64(r.OK) / float64(r.Calls) }

// Run runs one variant.
func Run(ctx context.Context, sc Scenario, v Variant) (*Result, error) {
	start := time.Now()
	c := &cache{last: map[int]served{}}
	mk := func(name string, slots int, slow float64, throttled bool, seed uint64) *deployment {
		return &deployment{name: name, slots: make(chan struct{}, slots), slow: slow, throttled: throttled,
			sc: sc, start: start, cache: c, rng: rand.New(rand.NewPCG(sc.Seed, seed))}
	}
	var ds []*deployment
	switch {
	case v.Healthy:
		ds = []*deployment{mk("a", sc.Slots, 1, false, 1), mk("b", sc.Slots, 1, false, 2), mk("c", sc.Slots, 1, false, 3)}
	case v.Name == Variants[0].Name:
		ds = []*deployment{mk("a", 3*sc.Slots, 1, true, 1)}
	default:
		ds = []*deployment{mk("a", sc.Slots, 1, true, 1), mk("b", sc.Slots, 1, false, 2), mk("c", 3*sc.Slots, 3, false, 3)}
	}
	inner, err := v.build(ds)
	if err != nil {
		return nil, err
	}
	r, err := retry.New(inner, retry.RetryConfig{
		MaxRetries: 3, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second, Jitter: 0.5, MaxRetryAfter: 10 * time.Second,
	}, retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(mnoop.NewMeterProvider()))
	if err != nil {
		return nil, err
	}
	res := &Result{Name: v.Name, bySession: make([]map[string]int, sc.Sessions)}
	for i := range res.bySession {
		res.bySession[i] = map[string]int{}
	}
	capacity := float64(3*sc.Slots) / sc.Latency.Seconds()
	rate := sc.Load * capacity
	rng := rand.New(rand.NewPCG(sc.Seed, 99))
	var wg sync.WaitGroup
	var ok atomic.Int64
	next := start
	end := start.Add(sc.Run)
	for {
		next = next.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second)))
		if next.After(end) {
			break
		}
		if err := bench.Sleep(ctx, time.Until(next)); err != nil {
			return nil, err
		}
		s := rng.IntN(sc.Sessions)
		res.Calls++
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			t0 := time.Now()
			out, err := r.Invoke(cctx, call{session: s})
			took := time.Since(t0)
			if err != nil {
				return
			}
			ok.Add(1)
			res.mu.Lock()
			res.durations = append(res.durations, took)
			since := t0.Sub(start)
			if since < sc.Throttle[0] || since >= sc.Throttle[1]+sc.Hint {
				res.bySession[s][out.(string)]++
			}
			res.mu.Unlock()
		})
	}
	wg.Wait()
	res.OK = int(ok.Load())
	for _, d := range ds {
		if d.slow > 1 {
			res.SlowShare = float64(d.served.Load()) / float64(max(res.OK, 1))
		}
		res.Requests += d.requests.Load()
		if d.throttled {
			res.ThrottledRequests += d.during.Load()
		}
	}
	if c.served > 0 {
		res.CacheHits = float64(c.hits) / float64(c.served)
	}
	res.Hints = int64((sc.Throttle[1] - sc.Throttle[0] + sc.Hint - 1) / sc.Hint)
	slices.Sort(res.durations)
	if n := len(res.durations); n > 0 {
		res.P50, res.P99 = res.durations[n/2], res.durations[n*99/100]
		var sum time.Duration
		for _, d := range res.durations {
			sum += d
		}
		res.Mean = sum / time.Duration(n)
	}
	top, all := 0, 0
	for _, m := range res.bySession {
		best := 0
		for _, n := range m {
			best = max(best, n)
			all += n
		}
		top += best
	}
	if all > 0 {
		res.SessionStickiness = float64(top) / float64(all)
	}
	if res.OK == 0 {
		return res, errors.New("no call succeeded")
	}
	return res, nil
}

func (r *Result) String() string {
	return fmt.Sprintf("%s\t%.2f %%\t%v\t%v\t%v\t%.2f\t%d (%d hints)\t%.1f %%\t%.1f %%\t%.1f %%",
		r.Name, 100*r.Success(), r.P50.Round(100*time.Microsecond), r.P99.Round(100*time.Microsecond),
		r.Mean.Round(100*time.Microsecond), float64(r.Requests)/float64(r.Calls), r.ThrottledRequests, r.Hints,
		100*r.SessionStickiness, 100*r.CacheHits, 100*r.SlowShare)
}

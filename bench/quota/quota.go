// Package quota is the fleet scenario of bench/README.md: replicas of one
// service share a provider whose quota is in tokens per minute, enforced
// with 429s, and each limits itself with a local bucket set to the whole
// quota, a local bucket set to its share of it, or the fleet module's
// bucket shared through Redis. Calls cost tokens: each is limited by an
// estimate (its prompt plus the most its answer may take) and settled on
// the usage the provider reports.
package quota

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/bench"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/ratelimit"
)

// Scenario is the shape of the fleet, its load and the provider. Time runs
// sixty times fast: the provider's quota per minute is allowed each second.
type Scenario struct {
	Replicas int
	Quota    float64       // tokens the provider allows a (compressed) minute, that is a second
	Offered  float64       // the load offered, as a multiple of the quota
	Run      time.Duration // how long the replicas call
	Warm     time.Duration // how long from the start before tokens served are counted
	Latency  time.Duration // the provider's answer time, ±50 %
	Deadline time.Duration // the longest a call waits for its tokens
	Seed     uint64
	// Fault, when set, runs beside the replicas from their start, as Run's
	// own goroutine: it does what it does to Redis (bench/cmd/fleet's
	// outage stops the server and starts it again, empty).
	Fault func(start time.Time)
}

// Default is the scenario of the committed results: 8 replicas offering
// half as much again as a 20,000-token quota for 20 s, measured from the
// 5th second: the buckets start full, and until the limiters' queues have
// filled (about 4 s) more is served, then less, than the steady state.
var Default = Scenario{
	Replicas: 8, Quota: 20_000, Offered: 1.5, Run: 20 * time.Second, Warm: 5 * time.Second,
	Latency: 40 * time.Millisecond, Deadline: time.Second, Seed: 1,
}

// A call's prompt is 100 to 300 tokens; its answer 50 to 450, asked with
// a cap of maxAnswer. Its estimate, prompt plus cap, is never below what it
// uses, which is 450 tokens on average.
const (
	maxAnswer = 500
	meanUse   = 450
)

// Load is how the traffic is spread over the replicas.
type Load struct {
	Name   string
	Shares func(replicas int) []float64
}

// Loads are the two spreads: even, and two replicas carrying 70 %.
var Loads = []Load{
	{"even", func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = 1 / float64(n)
		}
		return s
	}},
	{"uneven", func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			if i < 2 {
				s[i] = 0.35
			} else {
				s[i] = 0.30 / float64(n-2)
			}
		}
		return s
	}},
}

// Limiter is one way for the replicas to limit themselves.
type Limiter struct {
	Name string
	New  func(sc Scenario, replica int) (Replica, error)
}

// Replica is one replica's bucket.
type Replica struct {
	Backend  ratelimit.Backend
	Degraded func() bool // whether it fell back to local decisions; nil if it cannot
	Close    func()      // releases what it holds; nil if nothing
}

// LocalWhole gives each replica a bucket of the whole quota.
var LocalWhole = Limiter{"local, whole quota", func(sc Scenario, _ int) (Replica, error) {
	return Replica{Backend: ratelimit.InProcess(rate.NewLimiter(rate.Limit(sc.Quota), int(sc.Quota)))}, nil
}}

// LocalShare gives each replica a bucket of its share of the quota.
var LocalShare = Limiter{"local, 1/n of it", func(sc Scenario, _ int) (Replica, error) {
	n := float64(sc.Replicas)
	return Replica{Backend: ratelimit.InProcess(rate.NewLimiter(rate.Limit(sc.Quota/n), int(sc.Quota/n)))}, nil
}}

// Result is one limiter's run under one load.
type Result struct {
	Limiter, Load string
	Requests      int64   // calls that reached the provider
	Throttled     int64   // of which answered 429
	Shed          int64   // calls the limiter refused, their turn past the deadline
	Counted       int64   // tokens the provider served in the measured window
	Allowed       float64 // tokens the quota allows in the measured window
	Degraded      bool    // the limiter fell back to local decisions
	// Seconds is the run second by second: requests that reached the
	// provider, of which answered 429, and tokens served.
	Seconds []Second
}

// Second is one second of a run at the provider.
type Second struct{ Requests, Throttled, Tokens int64 }

// QuotaUsed is the share of the quota served in the measured window: the
// run after its warm-up.
func (r Result) QuotaUsed() float64 { return float64(r.Counted) / r.Allowed }

// ThrottledShare is the share of requests answered 429.
func (r Result) ThrottledShare() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.Throttled) / float64(r.Requests)
}

func (r Result) String() string {
	return fmt.Sprintf("%s\t%s\t%.1f %%\t%.2f %%\t%d\t%d\t%d", r.Limiter, r.Load,
		100*r.QuotaUsed(), 100*r.ThrottledShare(), r.Requests, r.Throttled, r.Shed)
}

// errThrottled is the provider's 429.
var errThrottled = errors.New("provider: 429 tokens per minute exceeded")

// request is a call's input; response its output.
type (
	request  struct{ prompt, uses int }
	response struct{ tokens int }
)

// provider serves a call if its bucket holds the tokens the call uses, and
// answers 429 otherwise.
type provider struct {
	sc        Scenario
	bucket    *rate.Limiter
	requests  atomic.Int64
	throttled atomic.Int64
	from, to  time.Time    // the window in which tokens served are counted
	counted   atomic.Int64 // tokens served in the window
	start     time.Time
	seconds   []struct{ requests, throttled, tokens atomic.Int64 }
	mu        sync.Mutex
	rng       *rand.Rand
}

func (p *provider) invoke(ctx context.Context, input any, _ ...core.Option) (any, error) {
	req := input.(request)
	p.requests.Add(1)
	sec := &p.seconds[min(max(int(time.Since(p.start)/time.Second), 0), len(p.seconds)-1)]
	sec.requests.Add(1)
	if !p.bucket.AllowN(time.Now(), req.uses) {
		p.throttled.Add(1)
		sec.throttled.Add(1)
		return nil, errThrottled
	}
	sec.tokens.Add(int64(req.uses))
	if now := time.Now(); !now.Before(p.from) && now.Before(p.to) {
		p.counted.Add(int64(req.uses))
	}
	p.mu.Lock()
	d := time.Duration(float64(p.sc.Latency) * (0.5 + p.rng.Float64()))
	p.mu.Unlock()
	// The answer takes its time whatever the call's deadline, which
	// bounds only the wait for tokens.
	if err := bench.Sleep(context.WithoutCancel(ctx), d); err != nil {
		return nil, err
	}
	return response{tokens: req.uses}, nil
}

// Run runs the replicas with one limiter under one load.
func Run(ctx context.Context, sc Scenario, lim Limiter, load Load) (Result, error) {
	p := &provider{
		sc:     sc,
		bucket: rate.NewLimiter(rate.Limit(sc.Quota), int(sc.Quota)),
		rng:    rand.New(rand.NewPCG(sc.Seed, 99)),
	}
	res := Result{Limiter: lim.Name, Load: load.Name}
	callRate := sc.Offered * sc.Quota / meanUse
	var shed atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, sc.Replicas)
	reps := make([]Replica, sc.Replicas)
	for i := range reps {
		rep, err := lim.New(sc, i)
		if err != nil {
			return res, err
		}
		if rep.Close != nil {
			defer rep.Close()
		}
		reps[i] = rep
	}
	start := time.Now()
	p.start = start
	p.seconds = make([]struct{ requests, throttled, tokens atomic.Int64 }, int(sc.Run/time.Second)+1)
	p.from, p.to = start.Add(sc.Warm), start.Add(sc.Run)
	if sc.Fault != nil {
		wg.Go(func() { sc.Fault(start) })
	}
	res.Allowed = sc.Quota * (p.to.Sub(p.from)).Seconds()
	for i, share := range load.Shares(sc.Replicas) {
		wg.Go(func() {
			errs[i] = replica(ctx, sc, p, reps[i].Backend, callRate*share, sc.Seed+uint64(i), &shed)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	res.Shed = shed.Load()
	res.Requests, res.Throttled = p.requests.Load(), p.throttled.Load()
	res.Counted = p.counted.Load()
	for i := range p.seconds[:len(p.seconds)-1] {
		s := &p.seconds[i]
		res.Seconds = append(res.Seconds, Second{s.requests.Load(), s.throttled.Load(), s.tokens.Load()})
	}
	for _, rep := range reps {
		res.Degraded = res.Degraded || (rep.Degraded != nil && rep.Degraded())
	}
	return res, nil
}

// replica makes calls at callRate a second, arriving at random (Poisson),
// for the scenario's run, each limited by its estimate and settled on its
// usage; it waits for its calls to end.
func replica(ctx context.Context, sc Scenario, p *provider, b ratelimit.Backend, callRate float64, seed uint64,
	shed *atomic.Int64) error {
	r, err := ratelimit.New(core.RunnableFunc(p.invoke), b,
		ratelimit.WithCost(func(in any) int { return in.(request).prompt + maxAnswer }),
		ratelimit.WithUsage(func(out any) int { return out.(response).tokens }),
		ratelimit.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	end := time.Now().Add(sc.Run)
	var wg sync.WaitGroup
	defer wg.Wait()
	next := time.Now()
	for {
		next = next.Add(time.Duration(rng.ExpFloat64() / callRate * float64(time.Second)))
		if next.After(end) {
			return nil
		}
		if err := bench.Sleep(ctx, time.Until(next)); err != nil {
			return err
		}
		prompt := 100 + rng.IntN(201)
		req := request{prompt: prompt, uses: prompt + 50 + rng.IntN(401)}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, sc.Deadline)
			defer cancel()
			if _, err := r.Invoke(cctx, req); errors.Is(err, ratelimit.ErrLimited) {
				shed.Add(1) // its turn would have come after its deadline
			}
		})
	}
}

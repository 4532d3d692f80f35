// Package tail is the tail-latency scenario of bench/README.md: a provider
// whose first-token latency has a heavy tail (a share of calls ten times
// slower), called with no hedging, with steadfast's hedge at a fixed delay
// and at the p95 delay (Invoke, and Stream up to its first token), and
// with failsafe-go's hedge policy (Invoke only: it does not hedge streams).
package tail

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"

	"github.com/steadfast-go/steadfast/bench"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/hedge"
	"github.com/steadfast-go/steadfast/internal/streams"
)

// Scenario is the shape of the load and of the provider.
type Scenario struct {
	Calls, Clients int           // calls in all, made by this many concurrent clients
	Fast           time.Duration // the usual first-token latency, ±20%
	SlowShare      float64       // the share of requests 10× slower
	FixedDelay     time.Duration // the fixed hedging delay
	Seed           uint64
}

// Default is the scenario of the committed results.
var Default = Scenario{Calls: 4000, Clients: 40, Fast: 20 * time.Millisecond, SlowShare: 0.05, FixedDelay: 30 * time.Millisecond, Seed: 1}

// Result is one variant's run.
type Result struct {
	Name     string
	P50, P99 time.Duration
	Max      time.Duration
	Requests int64 // requests that reached the provider
	Calls    int
	Failed   int
}

// ExtraLoad is the share of requests beyond one per call.
func (r Result) ExtraLoad() float64 { return float64(r.Requests)/float64(r.Calls) - 1 }

// provider answers after a first-token latency drawn per request: Fast
// ±20%, or ten times that for SlowShare of the requests. Streams send two
// more chunks 1ms apart after the first.
type provider struct {
	sc       Scenario
	mu       sync.Mutex
	rng      *rand.Rand
	requests atomic.Int64
}

func newProvider(sc Scenario) *provider {
	return &provider{sc: sc, rng: rand.New(rand.NewPCG(sc.Seed, 7))}
}

func (p *provider) latency() time.Duration {
	p.requests.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	d := time.Duration(float64(p.sc.Fast) * (0.8 + 0.4*p.rng.Float64()))
	if p.rng.Float64() < p.sc.SlowShare {
		d *= 10
	}
	return d
}

// Invoke answers after the first-token latency.
func (p *provider) Invoke(ctx context.Context, _ any, _ ...core.Option) (any, error) {
	if err := bench.Sleep(ctx, p.latency()); err != nil {
		return nil, err
	}
	return "answer", nil
}

// Batch is not used by the scenario.
func (p *provider) Batch(context.Context, []any, ...core.Option) ([]any, error) {
	return nil, errors.New("tail: no Batch")
}

// Stream sends its first chunk after the first-token latency.
func (p *provider) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	d := p.latency()
	ch := make(chan any)
	go func() {
		defer close(ch)
		for i := range 3 {
			if bench.Sleep(ctx, d) != nil || !streams.Send(ctx, ch, i) {
				return
			}
			d = time.Millisecond // between the later chunks
		}
	}()
	return ch, nil
}

// call makes one call and returns when its answer (for a stream, its
// first chunk) is in.
type call func(ctx context.Context) error

// Variant is one way of calling the provider.
type Variant struct {
	Name string
	// New returns the calls of a run over p.
	New func(sc Scenario, p core.Runnable) (call, error)
}

// Variants are the ways compared, no hedging first.
var Variants = []Variant{
	{"no hedging", func(_ Scenario, p core.Runnable) (call, error) { return invoke(p), nil }},
	{"steadfast hedge, fixed delay", func(sc Scenario, p core.Runnable) (call, error) {
		h, err := hedge.New(p, hedge.Config{Delay: sc.FixedDelay, MaxHedges: 1})
		return invoke(h), err
	}},
	{"steadfast hedge, p95 delay", func(sc Scenario, p core.Runnable) (call, error) {
		h, err := hedge.New(p, p95(sc))
		return invoke(h), err
	}},
	{"failsafe-go hedge, fixed delay", func(sc Scenario, p core.Runnable) (call, error) {
		return failsafeHedge(sc.FixedDelay, p), nil
	}},
	{"no hedging, stream first token", func(_ Scenario, p core.Runnable) (call, error) { return firstToken(p), nil }},
	{"steadfast hedge, p95 delay, stream first token", func(sc Scenario, p core.Runnable) (call, error) {
		h, err := hedge.New(p, p95(sc))
		return firstToken(h), err
	}},
}

// p95 is the adaptive policy: the p95 of recent latencies, between half
// and ten times the usual latency.
func p95(sc Scenario) hedge.Config {
	return hedge.Config{Delay: sc.Fast / 2, Quantile: 0.95, MaxDelay: 10 * sc.Fast, MaxHedges: 1}
}

func invoke(r core.Runnable) call {
	return func(ctx context.Context) error {
		_, err := r.Invoke(ctx, "q")
		return err
	}
}

func firstToken(r core.Runnable) call {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // only the first token is timed
		ch, err := r.Stream(ctx, "q")
		if err != nil {
			return err
		}
		v, ok := <-ch
		if err, isErr := v.(error); isErr {
			return err
		}
		if !ok {
			return errors.New("tail: empty stream")
		}
		return nil
	}
}

func failsafeHedge(delay time.Duration, p core.Runnable) call {
	exec := failsafe.With[any](hedgepolicy.NewBuilderWithDelay[any](delay).WithMaxHedges(1).Build())
	return func(ctx context.Context) error {
		_, err := exec.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[any]) (any, error) {
			return p.Invoke(e.Context(), "q")
		})
		return err
	}
}

// Run runs v under sc in real time and measures each call's latency.
func Run(ctx context.Context, sc Scenario, v Variant) (Result, error) {
	p := newProvider(sc)
	do, err := v.New(sc, p)
	if err != nil {
		return Result{}, err
	}
	lat := make([]time.Duration, sc.Calls)
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	for range sc.Clients {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < sc.Calls && ctx.Err() == nil; i = int(next.Add(1)) - 1 {
				start := time.Now()
				if do(ctx) != nil {
					failed.Add(1)
				}
				lat[i] = time.Since(start)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	slices.Sort(lat)
	q := func(f float64) time.Duration { return lat[min(int(f*float64(len(lat))), len(lat)-1)] }
	return Result{Name: v.Name, P50: q(0.50), P99: q(0.99), Max: lat[len(lat)-1],
		Requests: p.requests.Load(), Calls: sc.Calls, Failed: int(failed.Load())}, nil
}

// String is a table row.
func (r Result) String() string {
	return fmt.Sprintf("%s\t%v\t%v\t%v\t%+.1f%%\t%d", r.Name, r.P50.Round(100*time.Microsecond),
		r.P99.Round(100*time.Microsecond), r.Max.Round(100*time.Microsecond), 100*r.ExtraLoad(), r.Failed)
}

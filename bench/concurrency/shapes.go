package concurrency

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/ratelimit"
)

// A Shape is a load played against a QueueProvider: batch callers in a
// closed loop (Clients(t) times the capacity, calling again at once after
// an answer, after Pause after a failure), interactive callers arriving
// at random (Poisson) so that a quarter of the capacity is theirs, and
// the capacity over time, Capacity(t) times the model's.
type Shape struct {
	Name string
	// Span is how long a run lasts; Measured are the spans goodput is
	// read over (from 10 s after each step).
	Span     time.Duration
	Measured [][2]time.Duration
	Batch    func(t time.Duration) float64
	Capacity func(t time.Duration) float64
	// Interactive is whether interactive callers run beside the batch.
	Interactive bool
}

func constant(x float64) func(time.Duration) float64 { return func(time.Duration) float64 { return x } }

// Shapes are the issue's: steady overload at 3×; the capacity halved,
// then restored; demand that ramps from none to 3× over 30 s; interactive
// calls beside 3× batch work; interactive calls alone.
var Shapes = []Shape{
	{Name: "steady 3x", Span: 30 * time.Second, Measured: [][2]time.Duration{{10 * time.Second, 30 * time.Second}},
		Batch: constant(3), Capacity: constant(1)},
	{Name: "halved, restored", Span: 60 * time.Second,
		Measured: [][2]time.Duration{{10 * time.Second, 20 * time.Second}, {30 * time.Second, 40 * time.Second}, {50 * time.Second, 60 * time.Second}},
		Batch:    constant(3), Capacity: func(t time.Duration) float64 {
			if t >= 20*time.Second && t < 40*time.Second {
				return 0.5
			}
			return 1
		}},
	{Name: "ramp", Span: 40 * time.Second, Measured: [][2]time.Duration{{10 * time.Second, 40 * time.Second}},
		Batch: func(t time.Duration) float64 { return min(3, 3*t.Seconds()/30) }, Capacity: constant(1)},
	{Name: "priorities", Span: 40 * time.Second, Measured: [][2]time.Duration{{10 * time.Second, 40 * time.Second}},
		Batch: constant(3), Capacity: constant(1), Interactive: true},
	{Name: "unloaded", Span: 40 * time.Second, Measured: [][2]time.Duration{{10 * time.Second, 40 * time.Second}},
		Batch: constant(0), Capacity: constant(1), Interactive: true},
}

// Capacities are the family's.
var Capacities = []int{8, 24, 64}

// ShapeResult is one contender's run of a shape: goodput (the share of
// the capacity's slot time answered calls held) over each measured span,
// the 429s over the requests within them, and the interactive calls'
// p99 time to their first chunk (from asking, waits and retries
// included) over the measured spans, with their count.
type ShapeResult struct {
	Name            string
	Goodput         []float64
	Limited         float64
	InteractiveP99  time.Duration
	Interactive     int
	Refused         int       // calls the limiter refused (a *ratelimit.LimitedError: no permit within MaxWait)
	Limit, Capacity []float64 // a sample a second: steadfast's limit (0 for the others), the capacity
}

// MeanGoodput is the mean of the spans' goodput.
func (r ShapeResult) MeanGoodput() float64 {
	var s float64
	for _, g := range r.Goodput {
		s += g
	}
	return s / float64(max(len(r.Goodput), 1))
}

// A shapeContender is one limiter over a run's provider: a stream of
// the class given through it, read to its end, first called at its
// first chunk.
type shapeContender struct {
	stream func(ctx context.Context, interactive bool, first func()) error
	limit  func() float64
	stop   func()
}

// FamilyConfig is steadfast's configuration in the family's runs: the
// defaults but for Max.
var FamilyConfig = ratelimit.ConcurrencyConfig{Initial: 8, Max: 1000}

// ExampleConfig is the priorities example's of docs/concurrency.md.
var ExampleConfig = ratelimit.ConcurrencyConfig{Initial: 16, Max: 256, MaxStarvation: time.Minute, MaxWait: 20 * time.Second}

// newShapeContender returns contender i of Names over p, steadfast's
// with cfg.
func newShapeContender(i int, p *QueueProvider, cfg ratelimit.ConcurrencyConfig) (shapeContender, error) {
	direct := func(ctx context.Context, first func()) error { return drainFirst(ctx, p, first) }
	switch i {
	case 0:
		sf, err := ratelimit.NewConcurrency(p, cfg)
		if err != nil {
			return shapeContender{}, err
		}
		return shapeContender{stream: func(ctx context.Context, interactive bool, first func()) error {
			class := ratelimit.Batch
			if interactive {
				class = ratelimit.Interactive
			}
			return drainFirst(ratelimit.WithPriority(ctx, class), sf, first)
		}, limit: func() float64 { return float64(sf.Limit()) }, stop: func() {}}, nil
	case 1:
		through, stop := failsafeGate()
		return shapeContender{stream: func(ctx context.Context, interactive bool, first func()) error {
			return through(ctx, interactive, func() error { return direct(ctx, first) })
		}, stop: stop}, nil
	case 2:
		var fixed fixedLimit
		return shapeContender{stream: func(ctx context.Context, _ bool, first func()) error {
			if !fixed.take(ctx, p.Capacity) {
				return ctx.Err()
			}
			defer fixed.give()
			return direct(ctx, first)
		}, stop: func() {}}, nil
	}
	return shapeContender{stream: func(ctx context.Context, _ bool, first func()) error { return direct(ctx, first) }, stop: func() {}}, nil
}

// drainFirst reads a stream of r to its end, calling first at its first
// chunk.
func drainFirst(ctx context.Context, r core.Runnable, first func()) error {
	ch, err := r.Stream(ctx, "q")
	if err != nil {
		return err
	}
	seen := false
	for v := range ch {
		if err, ok := v.(error); ok {
			return err
		}
		if !seen {
			seen = true
			first()
		}
	}
	return ctx.Err()
}

// RunShape plays shape against a QueueProvider of model m and capacity
// c through contender i of Names (steadfast's with cfg), in the calling
// goroutine's time (a synctest bubble's for virtual time).
func RunShape(i int, shape Shape, m Queueing, c int, seed uint64, cfg ratelimit.ConcurrencyConfig) (ShapeResult, error) {
	p := NewQueueProvider(m, c, seed)
	sc, err := newShapeContender(i, p, cfg)
	if err != nil {
		return ShapeResult{}, err
	}
	defer sc.stop()
	res := ShapeResult{Name: Names[i]}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	start := time.Now()
	since := func() time.Duration { return time.Since(start) }
	measuring := func(t time.Duration) bool {
		return slices.ContainsFunc(shape.Measured, func(s [2]time.Duration) bool { return t >= s[0] && t < s[1] })
	}
	var mu sync.Mutex
	var took []time.Duration
	stream := func(ctx context.Context, interactive bool, first func()) error {
		err := sc.stream(ctx, interactive, first)
		if _, refused := errors.AsType[*ratelimit.LimitedError](err); refused {
			mu.Lock()
			res.Refused++
			mu.Unlock()
		}
		return err
	}
	// batch: closed-loop clients, of which the first Batch(t)·c call
	for n := range 3 * c {
		wg.Go(func() {
			for ctx.Err() == nil {
				if float64(n) >= shape.Batch(since())*float64(c) {
					select {
					case <-time.After(100 * time.Millisecond):
					case <-ctx.Done():
					}
					continue
				}
				if stream(ctx, false, func() {}) != nil {
					select {
					case <-time.After(Pause):
					case <-ctx.Done():
					}
				}
			}
		})
	}
	if shape.Interactive {
		rng := rand.New(rand.NewPCG(seed, 13))
		meanService := m.FirstChunk.Seconds()*math.Exp(sqr(math.Log(m.Spread)/2.3263)/2) +
			float64(m.MinTokens+m.MaxTokens)/2*m.TokenTime.Seconds()
		rate := float64(c) / 4 / meanService
		wg.Go(func() {
			for ctx.Err() == nil {
				select {
				case <-time.After(time.Duration(rng.ExpFloat64() / rate * float64(time.Second))):
				case <-ctx.Done():
					return
				}
				wg.Go(func() {
					asked := since()
					t0 := time.Now()
					for ctx.Err() == nil {
						var ttft time.Duration
						if stream(ctx, true, func() { ttft = time.Since(t0) }) == nil || ttft > 0 {
							if ttft > 0 && measuring(asked) {
								mu.Lock()
								took = append(took, ttft)
								mu.Unlock()
							}
							return
						}
						select {
						case <-time.After(Pause):
						case <-ctx.Done():
						}
					}
				})
			}
		})
	}
	// the capacity, the samples and the measured spans, a second at a time
	var ok0, lim0 int
	var busy0 time.Duration
	var okSum, limSum int
	for t := time.Duration(0); t < shape.Span; t += time.Second {
		p.SetCapacity(max(1, int(math.Round(shape.Capacity(t)*float64(c)))))
		for _, s := range shape.Measured {
			if t == s[0] {
				ok0, lim0, busy0 = p.Counts()
			}
		}
		time.Sleep(time.Second)
		if sc.limit != nil {
			res.Limit = append(res.Limit, sc.limit())
		}
		res.Capacity = append(res.Capacity, float64(p.Capacity()))
		for _, s := range shape.Measured {
			if t+time.Second == s[1] {
				ok1, lim1, busy1 := p.Counts()
				span := s[1] - s[0]
				res.Goodput = append(res.Goodput, (busy1-busy0).Seconds()/(float64(p.Capacity())*span.Seconds()))
				okSum += ok1 - ok0
				limSum += lim1 - lim0
			}
		}
	}
	cancel()
	wg.Wait()
	res.Limited = float64(limSum) / float64(max(okSum+limSum, 1))
	slices.Sort(took)
	res.Interactive = len(took)
	if len(took) > 0 {
		res.InteractiveP99 = took[len(took)*99/100]
	}
	return res, nil
}

func sqr(x float64) float64 { return x * x }

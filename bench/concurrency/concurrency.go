// Package concurrency plays clients against a provider with a hidden
// capacity, through steadfast's ratelimit.Concurrency, failsafe-go's
// adaptive limiter, a fixed limit set to the true capacity, and no limit,
// and interactive calls beside batch work through ratelimit.Concurrency's
// priorities and failsafe-go's priority limiter, in virtual time (testing/synctest), so that a run is the same on any
// machine but for goroutine order.
//
// The provider: at most Capacity calls in flight (a call beyond them is
// answered 429 after RejectAfter); a slope limit (more than Capacity/2
// calls admitted within SlopeWindow are answered 429 too: a provider that
// refuses concurrency that rises too fast); a time to the first chunk that
// grows with the calls in flight, by half at the capacity (FirstChunk × (1
// + in flight ÷ 2 Capacity): a batching server's, before it queues);
// answers of 10 to 200 tokens, TokenTime each. Goodput is the share of
// the capacity's slot time that calls held: every call the provider
// admits is answered (but one a run's end cuts), so it is the answers the
// provider could serve that it did, and unlike a count of answers it does
// not move with the answers' random lengths (a count over 20 s of a
// capacity of 10 moves by ±4 % from one seed to the next).
package concurrency

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/ratelimit"
)

// Model is the provider's numbers.
type Model struct {
	RejectAfter, SlopeWindow, FirstChunk, TokenTime time.Duration
	MinTokens, MaxTokens                            int
}

// DefaultModel is the provider of bench/README.md's tables.
var DefaultModel = Model{RejectAfter: 20 * time.Millisecond, SlopeWindow: 100 * time.Millisecond,
	FirstChunk: 200 * time.Millisecond, TokenTime: 10 * time.Millisecond, MinTokens: 10, MaxTokens: 200}

// errLimited is the provider's 429.
var errLimited = &status{code: 429}

type status struct{ code int }

func (s *status) Error() string   { return "provider: 429 too many requests" }
func (s *status) StatusCode() int { return s.code }

// Provider is the model with its capacity, which a run may change.
type Provider struct {
	m        Model
	mu       sync.Mutex
	capacity int
	inflight int
	admitted []time.Time // within the slope window
	rng      *rand.Rand
	// ok and limited count answers and 429s; busy is the slot time calls
	// held up to since, for goodput.
	ok, limited int
	busy        time.Duration
	since       time.Time
}

// NewProvider returns a provider of capacity calls in flight.
func NewProvider(m Model, capacity int, seed uint64) *Provider {
	return &Provider{m: m, capacity: capacity, rng: rand.New(rand.NewPCG(seed, 7))}
}

// SetCapacity changes the hidden capacity.
func (p *Provider) SetCapacity(c int) {
	p.mu.Lock()
	p.capacity = c
	p.mu.Unlock()
}

// Capacity is the hidden capacity now.
func (p *Provider) Capacity() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.capacity
}

// Counts returns the answers, the 429s and the slot time held so far.
func (p *Provider) Counts() (ok, limited int, busy time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold(time.Now())
	return p.ok, p.limited, p.busy
}

// hold adds the slot time held since the last change, under p.mu.
func (p *Provider) hold(now time.Time) {
	if !p.since.IsZero() {
		p.busy += time.Duration(p.inflight) * now.Sub(p.since)
	}
	p.since = now
}

// admit takes a slot, or says 429; it returns the answer's first-chunk
// time and length.
func (p *Provider) admit(now time.Time) (ttft, rest time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := 0
	for i < len(p.admitted) && now.Sub(p.admitted[i]) >= p.m.SlopeWindow {
		i++
	}
	p.admitted = p.admitted[i:]
	if p.inflight >= p.capacity || len(p.admitted) > max(p.capacity/2, 1) {
		p.limited++
		return 0, 0, false
	}
	p.admitted = append(p.admitted, now)
	p.hold(now)
	p.inflight++
	ttft = time.Duration(float64(p.m.FirstChunk) * (1 + float64(p.inflight)/float64(2*p.capacity)))
	tokens := p.m.MinTokens + p.rng.IntN(p.m.MaxTokens-p.m.MinTokens+1)
	return ttft, time.Duration(tokens) * p.m.TokenTime, true
}

func (p *Provider) leave(ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold(time.Now())
	p.inflight--
	if ok {
		p.ok++
	}
}

// Stream answers a stream: its first chunk after the time to it, then
// the rest of the answer as one chunk, or a 429.
func (p *Provider) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	start := time.Now()
	ttft, rest, ok := p.admit(start)
	if !ok {
		time.Sleep(p.m.RejectAfter)
		return nil, errLimited
	}
	ch := make(chan any)
	go func() {
		defer close(ch)
		p.leave(chunks(ctx, ch, ttft, rest))
	}()
	return ch, nil
}

// chunks sends a chunk on ch after each of waits, and reports whether it
// sent them all before ctx ended.
func chunks(ctx context.Context, ch chan<- any, waits ...time.Duration) bool {
	for _, wait := range waits {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return false
		}
		select {
		case ch <- "chunk":
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// Invoke is a stream read to its end.
func (p *Provider) Invoke(ctx context.Context, in any, opts ...core.Option) (any, error) {
	ch, err := p.Stream(ctx, in, opts...)
	return readAll(ctx, ch, err)
}

// readAll reads a stream to its end, for an Invoke.
func readAll(ctx context.Context, ch <-chan any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	for range ch {
	}
	return "answer", ctx.Err()
}

// Batch is not used.
func (p *Provider) Batch(context.Context, []any, ...core.Option) ([]any, error) {
	return nil, errors.New("concurrency: no batches")
}

// Contender is one limiter over one run's provider: a stream through
// it, read to its end.
type Contender struct {
	Name   string
	Stream func(ctx context.Context) error
	// Limit reads steadfast's limit (its ratelimit.concurrency.limit
	// gauge); nil for the others.
	Limit func() float64
}

// Names are the contenders, in the order Contenders returns them.
var Names = []string{"steadfast", "failsafe-go adaptivelimiter", "fixed at the true capacity", "no limit"}

// Contenders returns the limiters of a run over p; the fixed one reads
// the true capacity at every call.
func Contenders(p *Provider) ([]Contender, error) {
	reader := sdkmetric.NewManualReader()
	sf, err := ratelimit.NewConcurrency(p, ratelimit.ConcurrencyConfig{Initial: 8, Max: 1000,
		MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		return nil, err
	}
	fs := adaptivelimiter.NewBuilder[any]().WithLimits(1, 1000, 8).Build()
	var fixed fixedLimit
	return []Contender{
		{Name: Names[0], Stream: func(ctx context.Context) error { return drain(sf.Stream(ctx, "q")) },
			Limit: func() float64 { return gauge(reader, "ratelimit.concurrency.limit") }},
		{Name: Names[1], Stream: func(ctx context.Context) error {
			permit, err := fs.AcquirePermit(ctx)
			if err != nil {
				return err
			}
			if err := drain(p.Stream(ctx, "q")); err != nil {
				permit.Drop()
				return err
			}
			permit.Record()
			return nil
		}},
		{Name: Names[2], Stream: func(ctx context.Context) error {
			if !fixed.take(ctx, p.Capacity) {
				return ctx.Err()
			}
			defer fixed.give()
			return drain(p.Stream(ctx, "q"))
		}},
		{Name: Names[3], Stream: func(ctx context.Context) error { return drain(p.Stream(ctx, "q")) }},
	}, nil
}

// gauge reads the last value of the int64 gauge named from r, 0 when
// there is none.
func gauge(r *sdkmetric.ManualReader, name string) float64 {
	var rm metricdata.ResourceMetrics
	if r.Collect(context.Background(), &rm) != nil {
		return 0
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if g, ok := m.Data.(metricdata.Gauge[int64]); ok && m.Name == name && len(g.DataPoints) > 0 {
				return float64(g.DataPoints[0].Value)
			}
		}
	}
	return 0
}

func drain(ch <-chan any, err error) error {
	if err != nil {
		return err
	}
	for v := range ch {
		if err, ok := v.(error); ok {
			return err
		}
	}
	return nil
}

// fixedLimit is a semaphore whose size is read each time a call looks
// for room.
type fixedLimit struct {
	mu       sync.Mutex
	inflight int
	freed    chan struct{}
}

func (f *fixedLimit) take(ctx context.Context, size func() int) bool {
	for {
		f.mu.Lock()
		if f.inflight < size() {
			f.inflight++
			f.mu.Unlock()
			return true
		}
		if f.freed == nil {
			f.freed = make(chan struct{})
		}
		freed := f.freed
		f.mu.Unlock()
		select {
		case <-freed:
		case <-time.After(50 * time.Millisecond): // the size may have grown
		case <-ctx.Done():
			return false
		}
	}
}

func (f *fixedLimit) give() {
	f.mu.Lock()
	f.inflight--
	if f.freed != nil {
		close(f.freed)
		f.freed = nil
	}
	f.mu.Unlock()
}

// Phase is a span of a run at one capacity; Settle is the time given to
// follow a change before it is measured.
type Phase struct {
	Name             string
	Capacity         int
	Settle, Measured time.Duration
}

// StepPhases are the issue's: a start, the capacity down ×4, back up ×4.
var StepPhases = []Phase{
	{"start", 40, 10 * time.Second, 20 * time.Second},
	{"down x4", 10, 10 * time.Second, 20 * time.Second},
	{"up x4", 40, 10 * time.Second, 20 * time.Second},
}

// PhaseResult is what a phase measured: goodput, the share of the
// capacity's slot time successful calls held.
type PhaseResult struct {
	Phase   Phase
	Goodput float64
}

// Result is a contender's run.
type Result struct {
	Name        string
	Phases      []PhaseResult
	OK, Limited int
	Series      []Sample // one a SampleEvery
}

// Sample is a second of a run: when it ended, the capacity, the goodput
// over it, its 429s over its requests, and steadfast's limit at its end
// (0 for the others).
type Sample struct {
	At       time.Duration
	Capacity int
	Goodput  float64
	Limited  float64
	Limit    float64
}

// SampleEvery is the span of a Sample.
const SampleEvery = time.Second

// LimitedShare is the run's 429s over its requests.
func (r Result) LimitedShare() float64 {
	return float64(r.Limited) / float64(max(r.OK+r.Limited, 1))
}

// Clients is how many closed-loop clients a run has: three times the
// largest capacity, so that every limiter has more callers than room.
const Clients = 120

// Pause is a client's wait after a failure before it calls again.
const Pause = 100 * time.Millisecond

// Run plays the phases with contender number i, in the calling
// goroutine's time (a synctest bubble's for virtual time): Clients
// closed-loop clients, each calling again at once after an answer and
// after Pause after a failure.
func Run(i int, phases []Phase, seed uint64) (Result, error) {
	p := NewProvider(DefaultModel, phases[0].Capacity, seed)
	cs, err := Contenders(p)
	if err != nil {
		return Result{}, err
	}
	c := cs[i]
	return play(p, c.Name, func(int) Contender { return c }, c.Limit, phases), nil
}

// play plays the phases against p with the Clients clients, client n
// calling through of(n); limit, if not nil, reads the limit for the
// samples.
func play(p *Provider, name string, of func(n int) Contender, limit func() float64, phases []Phase) Result {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for n := range Clients {
		c := of(n)
		wg.Go(func() {
			for ctx.Err() == nil {
				if c.Stream(ctx) != nil {
					select {
					case <-time.After(Pause):
					case <-ctx.Done():
					}
				}
			}
		})
	}
	res := Result{Name: name}
	start := time.Now()
	for _, ph := range phases {
		p.SetCapacity(ph.Capacity)
		res.sample(start, p, limit, ph.Settle)
		_, _, b0 := p.Counts()
		res.sample(start, p, limit, ph.Measured)
		_, _, b1 := p.Counts()
		res.Phases = append(res.Phases, PhaseResult{Phase: ph, Goodput: goodput(b1-b0, ph.Capacity, ph.Measured)})
	}
	cancel()
	wg.Wait()
	res.OK, res.Limited, _ = p.Counts()
	return res
}

// goodput is the share of a capacity's slot time over span that busy is.
func goodput(busy time.Duration, capacity int, span time.Duration) float64 {
	return busy.Seconds() / (float64(capacity) * span.Seconds())
}

// sample waits d, keeping a Sample of every SampleEvery of it.
func (r *Result) sample(start time.Time, p *Provider, limit func() float64, d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		ok0, lim0, b0 := p.Counts()
		span := min(SampleEvery, time.Until(end))
		time.Sleep(span)
		ok1, lim1, b1 := p.Counts()
		sm := Sample{At: time.Since(start), Capacity: p.Capacity(), Goodput: goodput(b1-b0, p.Capacity(), span)}
		if n := ok1 - ok0 + lim1 - lim0; n > 0 {
			sm.Limited = float64(lim1-lim0) / float64(n)
		}
		if limit != nil {
			sm.Limit = limit()
		}
		r.Series = append(r.Series, sm)
	}
}

package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/internal/room"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/internal/version"
)

// ConcurrencyConfig configures a Concurrency. Its zero value is a limit
// that starts at 8 calls in flight and adapts between 1 and 1000.
type ConcurrencyConfig struct {
	// Initial is the limit to start at; 0 means 8, or Min or Max when 8
	// is outside them.
	Initial int
	// Min and Max bound the limit; 0 means 1 and 1000.
	Min, Max int
	// Cost, when set, weighs a call's permit from its input (for an LLM,
	// an estimate of its tokens), and the limit counts that weight in
	// flight rather than calls; Initial, Min and Max are then in the same
	// unit. A call costing more than Max is refused with a permanent
	// error; a negative cost is an error too.
	Cost func(input any) int
	// MaxStarvation is the longest a waiting call is passed over by
	// calls of a higher class; 0 means 30 s. A waiting call moves up a
	// class each half of it, and once it has waited MaxStarvation it
	// goes next.
	MaxStarvation time.Duration
	// MaxWait, when positive, is the longest a call waits for a permit;
	// with or without it, a call never waits past its context's
	// deadline. A call that cannot expect a permit within that is refused
	// at once with a *LimitedError (counter ratelimit.shed).
	MaxWait time.Duration
	// MeterProvider, when set, is the meter provider; else the global one.
	MeterProvider metric.MeterProvider
	// Shared, when set, keeps the limit in a store that many processes
	// share (the fleet module's NewConcurrency), which gives this one its
	// share; Initial, Min and Max are the limit's before the store first
	// answers, and while it cannot be reached.
	Shared SharedLimit
}

// Concurrency is a core.Runnable behind a limit on calls in flight that
// finds the provider's capacity, and holds it where the provider starts
// to queue rather than where it starts to refuse. Its law, in a
// paragraph (docs/concurrency.md says why each number is what it is):
//
// Until the first cut each clean answer of a call admitted while the
// limit was in use (half of it in flight, or calls waiting) raises the
// limit by its cost (TCP's slow start, RFC 5681). An overload (429, 529,
// an overloaded 503, or a provider's code for one, as retry classifies
// it) cuts it to 0.7 of itself, more for a Retry-After over a second
// (0.7 ÷ (1 + log₂ of it), never below 0.1); one burst is one cut. For
// streams, every 16 first chunks of calls admitted since the last cut
// are a window: the window says queue when its fastest first chunk is
// later than base by more than half of spread and half of base, most of
// its calls having been admitted while the limit was in use (an idle
// limit never cuts); base and spread are averages over windows, weight
// 1/8, of the fastest and of the mean less the fastest, a queued window
// moving base only 1/8 of that (1/64: a queue of ours drains with the
// cut, one that stays is not ours and becomes the base). A queue moves
// the fastest of sixteen; a long prompt moves only its own chunk and
// widens spread; never a minimum ever seen. A queued window cuts the
// limit to 0.9 of itself. After a cut, a window of clean answers (as
// many as the limit) raises the limit by a step that doubles with each
// window, to a ceiling 0.95 of where the last cut came; it stays there
// 4 windows, then probes past it from a step of 1, and with streams
// each raise waits for a window that says no queue. Parameters: 0.7,
// 0.1, 0.95, 4, 0.9, 16, 1/8.
//
// The room a raise adds opens a call at a time as calls end. A call
// refused with nothing else in flight makes the next wait (the
// refusal's Retry-After, or as long as it took or as the provider's
// base first chunk, doubling while refusals go on, at most a second but
// for a Retry-After): no end will come to say the provider has room. An
// answer's total time is never read: its length is not load. A plain
// error, a 500 or a 400 leaves the limit as it is. Under saturation
// calls wait by class (WithPriority): a higher class goes first, a
// waiting call ages, and none waits longer than MaxStarvation while
// others go. It is safe for concurrent use.
type Concurrency struct {
	inner   core.Runnable
	p       *permits
	cost    func(input any) int
	maxWait time.Duration
	tel     concurrencyTelemetry
}

// NewConcurrency returns inner behind an adaptive limit on calls in
// flight. It reports an error naming the problem when inner is nil or c
// is invalid (Min above Max, a negative limit or wait, an Initial outside
// Min and Max).
func NewConcurrency(inner core.Runnable, c ConcurrencyConfig) (*Concurrency, error) {
	if inner == nil {
		return nil, errors.New("ratelimit: NewConcurrency: inner Runnable is nil")
	}
	p, err := newPermits("NewConcurrency", c)
	if err != nil {
		return nil, err
	}
	return newConcurrency(inner, p, c)
}

// ConcurrencyMiddleware returns a core.Middleware that puts Runnables
// behind one adaptive limit, all sharing it. It panics when c is invalid,
// so that a bad configuration fails at start-up.
func ConcurrencyMiddleware(c ConcurrencyConfig) core.Middleware {
	p, err := newPermits("ConcurrencyMiddleware", c)
	if err != nil {
		panic(err)
	}
	return func(inner core.Runnable) core.Runnable {
		if inner == nil {
			panic(errors.New("ratelimit: ConcurrencyMiddleware: inner Runnable is nil"))
		}
		r, err := newConcurrency(inner, p, c)
		if err != nil {
			panic(err)
		}
		return r
	}
}

func newConcurrency(inner core.Runnable, p *permits, c ConcurrencyConfig) (*Concurrency, error) {
	r := &Concurrency{inner: inner, p: p, cost: c.Cost, maxWait: rate.InfDuration}
	if c.MaxWait > 0 {
		r.maxWait = c.MaxWait
	}
	var err error
	if r.tel, err = newConcurrencyTelemetry(c.MeterProvider); err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.moved == nil {
		p.moved = r.tel.limitNow
	}
	p.refresh()
	r.tel.limitNow(p.a.limit)
	p.mu.Unlock()
	return r, nil
}

// newPermits validates c and returns the permits it describes.
func newPermits(fn string, c ConcurrencyConfig) (*permits, error) {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("ratelimit: %s: ConcurrencyConfig.%s %s", fn, field, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Min < 0:
		return nil, bad("Min", "is %d, must not be negative", c.Min)
	case c.Max < 0:
		return nil, bad("Max", "is %d, must not be negative", c.Max)
	case c.Initial < 0:
		return nil, bad("Initial", "is %d, must not be negative", c.Initial)
	case c.MaxStarvation < 0:
		return nil, bad("MaxStarvation", "is %v, must not be negative", c.MaxStarvation)
	case c.MaxWait < 0:
		return nil, bad("MaxWait", "is %v, must not be negative", c.MaxWait)
	}
	lo, hi := max(c.Min, 1), c.Max
	if hi == 0 {
		hi = max(1000, lo)
	}
	if lo > hi {
		return nil, bad("Min", "is %d, above Max %d", lo, hi)
	}
	initial := c.Initial
	switch {
	case initial == 0:
		initial = min(max(8, lo), hi)
	case initial < lo || initial > hi:
		return nil, bad("Initial", "is %d, outside Min %d and Max %d", initial, lo, hi)
	}
	starve := c.MaxStarvation
	if starve == 0 {
		starve = 30 * time.Second
	}
	return &permits{a: aimd{limit: float64(initial), min: float64(lo), max: float64(hi), step: 1}, reach: float64(initial), starve: starve, shared: c.Shared}, nil
}

// Invoke calls the inner Invoke with a permit.
func (r *Concurrency) Invoke(ctx context.Context, input any, opts ...core.Option) (any, error) {
	g, err := r.take(ctx, input)
	if err != nil {
		return nil, err
	}
	given := false
	defer func() {
		if !given { // the inner Runnable panicked: the permit is given back, the panic goes on
			r.give(g, errUnwound, 0)
		}
	}()
	out, err := r.inner.Invoke(ctx, input, opts...)
	given = true
	r.give(g, err, 0)
	return out, err
}

// errUnwound is the outcome of a call whose Runnable panicked: neither an
// answer nor an overload.
var errUnwound = errors.New("ratelimit: the inner Runnable panicked")

// Batch runs each item as a call of its own, each with its permit, so
// that the items in flight are what the limit counts (bounded by
// core.WithMaxConcurrency too).
func (r *Concurrency) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(r.Invoke).Batch(ctx, inputs, opts...)
}

// Stream calls the inner Stream with a permit, held until the stream
// ends; the time to its first value is what the limit reads of latency.
func (r *Concurrency) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	return r.stream(ctx, input, func(ctx context.Context) (<-chan any, error) { return r.inner.Stream(ctx, input, opts...) })
}

// Resume continues a stream of input after last through the inner
// Resume, as a call of its own, with a permit.
func (r *Concurrency) Resume(ctx context.Context, input any, last any, opts ...core.Option) (<-chan any, error) {
	resumer, ok := r.inner.(core.Resumer)
	if !ok {
		return nil, fmt.Errorf("ratelimit: inner Runnable cannot resume: %w", core.ErrNotResumable)
	}
	return r.stream(ctx, input, func(ctx context.Context) (<-chan any, error) { return resumer.Resume(ctx, input, last, opts...) })
}

// CanResume reports whether the inner Runnable can resume the stream of
// ctx's call.
func (r *Concurrency) CanResume(ctx context.Context) bool { return streams.CanResume(ctx, r.inner) }

// Unwrap returns the inner Runnable.
func (r *Concurrency) Unwrap() core.Runnable { return r.inner }

// stream opens a stream with a permit and forwards it, giving the permit
// back when it ends; the time to its first chunk is what the limit reads
// of latency.
func (r *Concurrency) stream(ctx context.Context, input any, open func(context.Context) (<-chan any, error)) (<-chan any, error) {
	g, err := r.take(ctx, input)
	if err != nil {
		return nil, err
	}
	given := false
	defer func() {
		if !given {
			r.give(g, errUnwound, 0)
		}
	}()
	start := time.Now()
	ch, err := open(ctx)
	given = true
	if err != nil {
		r.give(g, err, 0)
		return nil, err
	}
	out := make(chan any)
	go func() { // ends with the stream, or when ctx is done
		defer close(out)
		var ttft time.Duration
		res := streams.Pump(ctx, ch, out, streams.PumpConfig{Seen: func(any) {
			if ttft == 0 {
				ttft = max(time.Since(start), time.Nanosecond)
			}
		}})
		var failed error
		switch res.End {
		case streams.Failed:
			failed = res.Err
		case streams.Canceled:
			failed = context.Cause(ctx)
		}
		r.give(g, failed, ttft)
	}()
	return out, nil
}

// take waits for a call's permit, within its deadline and MaxWait.
func (r *Concurrency) take(ctx context.Context, input any) (grant, error) {
	cost := 1.0
	if r.cost != nil {
		n := r.cost(input)
		if n < 0 {
			return grant{}, &costError{cost: n}
		}
		cost = float64(n)
	}
	prio := priorityOf(ctx)
	g, err := r.p.take(ctx, cost, prio, room.Bound{Max: r.maxWait})
	if err != nil {
		if _, limited := errors.AsType[*LimitedError](err); limited {
			r.tel.shed.Add(ctx, 1, metric.WithAttributes(attrPriority.String(prio.name())))
		}
		return grant{}, err
	}
	return g, nil
}

// give returns a call's permit with what its end, err, says of the
// provider: an overload, a clean answer, or neither.
func (r *Concurrency) give(g grant, err error, ttft time.Duration) {
	o := outcome{clean: err == nil, ttft: ttft}
	if err != nil && !errproto.Local(err) {
		switch errproto.Class(err) {
		case errproto.ClassRateLimit, errproto.ClassOverloaded:
			o.overload = true
			o.hint, _ = errproto.RetryAfter(err)
		}
	}
	if limit, changed := r.p.give(g, o); changed {
		r.tel.limitNow(limit)
	}
}

// permitError is the error of a call whose cost is above the largest
// limit: no wait will ever admit it.
type permitError struct{ cost, max float64 }

func (e *permitError) Error() string {
	return fmt.Sprintf("ratelimit: a call costing %v can never pass a concurrency limit of at most %v", e.cost, e.max)
}

func (e *permitError) Is(target error) bool { return target == ErrLimited }
func (e *permitError) Retryable() bool      { return false }
func (e *permitError) Local() bool          { return true }

// attrPriority is a shed call's class.
const attrPriority = attribute.Key("ratelimit.priority")

// concurrencyTelemetry is a Concurrency's gauge of its limit and counter
// of the calls it refused.
type concurrencyTelemetry struct {
	limit metric.Int64Gauge
	shed  metric.Int64Counter
}

func newConcurrencyTelemetry(mp metric.MeterProvider) (concurrencyTelemetry, error) {
	m := version.Meter(ScopeName, mp)
	var t concurrencyTelemetry
	var err error
	if t.limit, err = m.Int64Gauge("ratelimit.concurrency.limit",
		metric.WithDescription("The limit on calls in flight (or their cost) a Concurrency has found."), metric.WithUnit("{call}")); err != nil {
		return t, fmt.Errorf("ratelimit: metric ratelimit.concurrency.limit: %w", err)
	}
	if t.shed, err = m.Int64Counter("ratelimit.shed",
		metric.WithDescription("Calls a Concurrency refused: no permit within their deadline or MaxWait."), metric.WithUnit("{call}")); err != nil {
		return t, fmt.Errorf("ratelimit: metric ratelimit.shed: %w", err)
	}
	return t, nil
}

// limitNow records the limit.
func (t concurrencyTelemetry) limitNow(limit float64) {
	t.limit.Record(context.Background(), int64(math.Round(limit)))
}

// Limit is the limit on calls in flight (or on their cost, with
// ConcurrencyConfig.Cost) that the Concurrency has found, as the gauge
// ratelimit.concurrency.limit records it: a dashboard reads the gauge, a
// program this.
func (r *Concurrency) Limit() int {
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	r.p.refresh()
	return int(math.Round(r.p.a.limit))
}

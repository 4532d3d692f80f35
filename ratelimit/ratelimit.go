// Package ratelimit slows calls down before the provider has to say 429: a
// core.Runnable decorator that takes each call's tokens from a Backend,
// InProcess's golang.org/x/time/rate bucket or the fleet module's bucket in
// Redis, shared by many processes.
//
// A call's whole cost (one token, a Batch one per item, or what WithCost
// says) is admitted, waited for, or refused at once, before any token is
// spent. A call waits unless the wait would pass its context's deadline or
// WithMaxWait (WithMaxWait(0): never wait); a refusal is a *LimitedError
// that the retry layer retries after exactly the wait the bucket asks for,
// and a cost above the bucket's burst a permanent one (Burst set). Every
// refusal reports Local() true, so a circuit breaker never
// counts it. Put the limiter inside the retry layer, so that every attempt
// takes its tokens:
//
//	r := core.Chain(llm, retry.Middleware(cfg), ratelimit.Middleware(ratelimit.InProcess(lim)))
//
// With WithCost and WithUsage the bucket counts an LLM's tokens: WithCost
// estimates a call from its input before it is sent, and WithUsage settles
// it from the usage its output reports, returning what was not used and
// taking what was used beyond the estimate as debt. A Batch costs the sum
// of its items; a Stream settles when it ends.
//
// When the chain's provider reads its rate-limit headers
// (a RateLimits method, as the provider adapters have), the calls are also
// paced by them: once they leave no room until their reset, a call waits
// for it, within the same WithMaxWait and deadline, rather than meet a
// 429. A call is counted against them as it goes, after its turn in the
// bucket. With the fleet module's Backend, the count is the whole
// fleet's.
//
// NewConcurrency and ConcurrencyMiddleware limit calls in flight instead,
// at a limit that finds the provider's capacity when nothing says it (a
// provider that answers 429 when concurrency rises too fast, a
// self-hosted model whose first token comes later as its queue grows):
// cut on rate limits and overloads, raised after windows of clean
// answers. Its calls wait by class (WithPriority: Interactive, Standard,
// Batch), with no class starved. A rate and a concurrency limit compose:
// put both inside the retry layer, the concurrency limit nearest the
// provider, so that a permit is held only while the provider works.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/pace"
	"github.com/steadfast-go/steadfast/internal/room"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/internal/version"
)

// ScopeName is the OpenTelemetry instrumentation scope of the meter.
const ScopeName = "github.com/steadfast-go/steadfast/ratelimit"

// attrWait is the wait, in seconds, on the ratelimit.wait span event.
const attrWait = attribute.Key("ratelimit.wait")

// Runnable is a core.Runnable whose calls each take their cost in tokens
// from a bucket first. It is safe for concurrent use.
type Runnable struct {
	inner   core.Runnable
	b       Backend
	maxWait time.Duration
	cost    func(input any) int
	usage   func(output any) int
	waits   metric.Float64Histogram
	// pace, when the inner chain reads its provider's limits from the
	// headers of its responses (its RateLimits method), holds calls that
	// those limits have no room for until their reset.
	pace *pace.Pace
	// src is the chain's limits, and shared the backend's count of the
	// fleet's calls against them, when the backend keeps one.
	src    pace.Source
	shared SharedHeaders
}

// New returns inner behind the bucket b: InProcess's, over a
// golang.org/x/time/rate limiter, or one shared by many processes (the
// fleet module's). It reports an error when inner or b is nil, or an
// option is invalid.
func New(inner core.Runnable, b Backend, opts ...Option) (*Runnable, error) {
	return newRunnable("New", inner, b, opts)
}

func newRunnable(fn string, inner core.Runnable, b Backend, opts []Option) (*Runnable, error) {
	if inner == nil {
		return nil, fmt.Errorf("ratelimit: %s: inner Runnable is nil", fn)
	}
	if b == nil {
		return nil, fmt.Errorf("ratelimit: %s: Backend is nil", fn)
	}
	var c config
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	r := &Runnable{inner: inner, b: b, maxWait: rate.InfDuration, cost: c.cost, usage: c.usage}
	if src, ok := core.Find[pace.Source](inner); ok {
		r.pace, r.src = pace.New(src), src
		r.shared, _ = b.(SharedHeaders)
	}
	if c.maxWait != nil {
		if *c.maxWait < 0 {
			return nil, fmt.Errorf("ratelimit: %s: WithMaxWait(%v): must be at least 0", fn, *c.maxWait)
		}
		r.maxWait = *c.maxWait
	}
	var err error
	r.waits, err = version.Meter(ScopeName, c.mp).Float64Histogram("ratelimit.wait.duration",
		metric.WithDescription("Time calls waited for a token."), metric.WithUnit("s"))
	if err != nil {
		return nil, fmt.Errorf("ratelimit: metric ratelimit.wait.duration: %w", err)
	}
	return r, nil
}

// Middleware returns a core.Middleware that puts Runnables behind the
// bucket b, all sharing it. It panics when New would fail, so that a bad
// configuration fails at start-up.
func Middleware(b Backend, opts ...Option) core.Middleware {
	if _, err := newRunnable("Middleware", core.RunnableFunc(nil), b, opts); err != nil {
		panic(err)
	}
	return func(inner core.Runnable) core.Runnable {
		r, err := newRunnable("Middleware", inner, b, opts)
		if err != nil {
			panic(err)
		}
		return r
	}
}

// Invoke takes the call's cost, then calls the inner Invoke, and settles
// the cost from the output's usage (WithUsage).
func (r *Runnable) Invoke(ctx context.Context, input any, opts ...core.Option) (any, error) {
	cost, err := r.take(ctx, input)
	if err != nil {
		return nil, err
	}
	out, err := r.inner.Invoke(ctx, input, opts...)
	if err == nil && r.usage != nil {
		r.settle(ctx, cost, r.usage(out))
	}
	return out, err
}

// Batch takes the cost of every input, all at once, then calls the inner
// Batch, and settles each item that succeeded.
func (r *Runnable) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	costs, total, err := r.batchCost(inputs)
	if err != nil {
		return nil, err
	}
	if err := r.acquire(ctx, total); err != nil {
		return nil, err
	}
	outs, err := r.inner.Batch(ctx, inputs, opts...)
	if r.usage != nil {
		r.settleBatch(ctx, len(inputs), costs, outs, err)
	}
	return outs, err
}

// Stream takes the call's cost, then calls the inner Stream; with
// WithUsage, it settles the cost when the stream ends.
func (r *Runnable) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	return r.stream(ctx, input, func() (<-chan any, error) { return r.inner.Stream(ctx, input, opts...) })
}

// Resume continues a stream behind the bucket: a call like any other,
// which takes its cost and settles it as Stream does. It answers
// core.ErrNotResumable, taking nothing, when the inner Runnable is not a
// core.Resumer.
func (r *Runnable) Resume(ctx context.Context, input any, last any, opts ...core.Option) (<-chan any, error) {
	resumer, ok := r.inner.(core.Resumer)
	if !ok {
		return nil, fmt.Errorf("ratelimit: inner Runnable cannot resume: %w", streams.ErrNotResumable)
	}
	return r.stream(ctx, input, func() (<-chan any, error) { return resumer.Resume(ctx, input, last, opts...) })
}

// CanResume reports whether the Runnable it wraps can resume the stream
// of ctx's call.
func (r *Runnable) CanResume(ctx context.Context) bool { return streams.CanResume(ctx, r.inner) }

// stream is Stream, with open making the inner stream.
func (r *Runnable) stream(ctx context.Context, input any, open func() (<-chan any, error)) (<-chan any, error) {
	cost, err := r.take(ctx, input)
	if err != nil {
		return nil, err
	}
	ch, err := open()
	if err != nil || ch == nil || r.usage == nil {
		return ch, err
	}
	out := make(chan any)
	go r.forward(ctx, cost, ch, out)
	return out, nil
}

// Unwrap returns the inner Runnable, so core.NameOf, core.IsIdempotent
// and the call span's attributes see through the limiter.
func (r *Runnable) Unwrap() core.Runnable { return r.inner }

// take takes a call's cost, which it returns.
func (r *Runnable) take(ctx context.Context, input any) (int, error) {
	cost := 1
	if r.cost != nil {
		var err error
		if cost, err = r.costOf(input); err != nil {
			return 0, err
		}
	}
	return cost, r.acquire(ctx, cost)
}

// waitForReset holds a call that the provider's own limits, as its last
// answer said them, leave no room for, until they reset, within b. It
// counts nothing: the call is counted when it is sent (see acquire).
func (r *Runnable) waitForReset(ctx context.Context, tokens int, b room.Bound) error {
	waited, err := room.Await(ctx, b, func() core.Reservation {
		return room.After(r.pace.Wait(time.Now(), tokens), true)
	})
	if waited > 0 {
		r.recordWait(ctx, waited)
	}
	return limitedOr(ctx, err)
}

// hold waits wait for the provider's reset, within b.
func (r *Runnable) hold(ctx context.Context, wait time.Duration, b room.Bound) error {
	now := time.Now()
	if ok, byDeadline := b.Fits(ctx, now, wait); !ok {
		return &LimitedError{Wait: now.Sub(b.Since) + wait, Deadline: byDeadline}
	}
	if room.Sleep(ctx, wait) != nil {
		return ctx.Err()
	}
	r.recordWait(ctx, time.Since(now))
	return nil
}

// limitedOr is the error of a wait that ended with err: a *LimitedError
// for a wait refused for its bound, the context's error for a wait cut
// short.
func limitedOr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if tooLong, refused := errors.AsType[*room.TooLong](err); refused {
		return &LimitedError{Wait: tooLong.Wait, Deadline: tooLong.Deadline}
	}
	return ctx.Err()
}

// recordWait reports a call's wait on the span in ctx and in the
// histogram.
func (r *Runnable) recordWait(ctx context.Context, wait time.Duration) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("ratelimit.wait", trace.WithAttributes(attrWait.Float64(wait.Seconds())))
	}
	r.waits.Record(ctx, wait.Seconds())
}

// acquire takes n tokens at once: now, after a wait, or not at all. A
// refused call spends none. When the provider's headers are read, the
// call first waits for their reset if they leave no room, then takes its
// turn in the bucket, and is counted against them as it goes: if the
// answers that came while it waited its turn leave no room, its tokens go
// back and it waits for the reset again. The calls held for a reset all
// wake at it, and each takes its turn then, from the new window's room:
// counted as they go, after the bucket's wait, a fleet's calls queued in
// its shared bucket do not all go on what the headers said before.
func (r *Runnable) acquire(ctx context.Context, n int) error {
	if n == 0 {
		return nil
	}
	if r.pace == nil {
		return r.takeTurn(ctx, n, r.maxWait)
	}
	tokens := 0
	if r.cost != nil {
		tokens = n
	}
	b := room.Bound{Since: time.Now(), Max: r.maxWait}
	for {
		if err := r.waitForReset(ctx, tokens, b); err != nil {
			return err
		}
		if err := r.takeTurn(ctx, n, max(r.maxWait-time.Since(b.Since), 0)); err != nil {
			return err
		}
		res := r.reserveHeaders(ctx, tokens)
		if res.OK {
			return nil
		}
		r.b.Adjust(ctx, -n) // the turn of a call the provider has no room for yet
		if err := r.hold(ctx, res.Delay, b); err != nil {
			return err
		}
	}
}

// reserveHeaders counts a call of tokens that is about to go against the
// provider's limits, and returns the wait for their reset when they leave
// no room: by the fleet's count when the backend keeps one and answers,
// else by this process's. This process's count is kept either way, so
// that it is current when the fleet's fails.
func (r *Runnable) reserveHeaders(ctx context.Context, tokens int) core.Reservation {
	res := r.pace.Reserve(time.Now(), tokens)
	if r.shared == nil {
		return res
	}
	limits, _ := r.src.RateLimits() // none yet: the fleet counts the calls before the first answer
	if shared, err := r.shared.ReserveHeaders(ctx, limits, tokens); err == nil {
		return shared
	}
	return res
}

// takeTurn takes n tokens from the bucket, waiting at most maxWait, and
// within the context's deadline, for them.
func (r *Runnable) takeTurn(ctx context.Context, n int, maxWait time.Duration) error {
	// The in-process bucket's free tokens are taken before any deadline
	// is looked at: the success path is one lock.
	if lb, ok := r.b.(*inProcess); ok && lb.lim.AllowN(time.Now(), n) {
		return nil
	}
	deadline := false
	var asked time.Time // set when a deadline bounds the wait
	if dl, ok := ctx.Deadline(); ok {
		if asked = time.Now(); dl.Sub(asked) < maxWait {
			maxWait, deadline = max(dl.Sub(asked), 0), true
		}
	}
	res, err := r.b.Reserve(ctx, n, maxWait)
	switch {
	case err != nil:
		return err
	case !res.OK:
		return &LimitedError{Wait: res.Delay, Deadline: deadline && res.Delay != rate.InfDuration}
	case res.Delay == 0:
		return nil
	}
	wait := res.Delay
	r.recordWait(ctx, wait)
	// Under a deadline, the wait runs from when the tokens were asked for:
	// a backend across the network answers a round trip later, and a turn
	// admitted just within the deadline must not be missed by that much.
	if !asked.IsZero() {
		if wait -= time.Since(asked); wait <= 0 {
			return nil
		}
	}
	if room.Sleep(ctx, wait) != nil {
		room.Cancel(res) // the tokens of a call that will not go
		return ctx.Err()
	}
	return nil
}

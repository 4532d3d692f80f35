// Package ratelimit slows calls down before the provider has to say 429: a
// core.Runnable decorator over a golang.org/x/time/rate token bucket.
//
// Each call takes a token (a Batch one per item). A call's whole cost is
// decided at once, before any token is spent: it is admitted, waited for,
// or refused. By default a call waits for its tokens, unless the wait would
// pass the context's deadline, in which case it fails at once; with
// WithFailFast it never waits. Either refusal is a *LimitedError, which the
// retry layer retries after exactly the wait the bucket asks for (and only
// the caller's own deadline, which the retry layer checks, ends the call).
// A cost larger than the bucket's burst can never be admitted: it fails
// with a permanent *BurstError. Put the limiter inside the retry layer
// (core.Chain(r, retry.Middleware(...), ratelimit.Middleware(lim))) so that
// every attempt takes a token.
//
// Every refusal is made on this side of the wire: its error has a Local()
// method reporting true (core.IsLocal), so a circuit breaker, wherever it
// stands in the chain, never counts it as a failure of the provider.
//
// Pass the same *rate.Limiter to several decorators to share one bucket.
// A waited token shows on the caller's span as a ratelimit.wait event and in
// the ratelimit.wait.duration histogram.
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
	"github.com/steadfast-go/steadfast/internal/version"
)

// ScopeName is the OpenTelemetry instrumentation scope of the meter.
const ScopeName = "github.com/steadfast-go/steadfast/ratelimit"

// AttrWait is the wait, in seconds, on the ratelimit.wait span event.
const AttrWait = attribute.Key("ratelimit.wait")

// ErrLimited is matched (errors.Is) by the errors of calls refused a token.
var ErrLimited = errors.New("ratelimit: rate limited")

// LimitedError is the error of a call refused its tokens: in fail-fast mode
// when they are not free now, in waiting mode when the wait would pass the
// context's deadline. Wait is how long the tokens would take.
type LimitedError struct {
	Wait time.Duration
	// Deadline reports that waiting was refused because of the context's
	// deadline. That deadline may be a retry layer's per-attempt timeout
	// rather than the caller's, so the refusal is still retryable after
	// Wait: the retry layer ends the call if its caller's deadline would
	// pass first.
	Deadline bool
}

// Error says how long the tokens would take.
func (e *LimitedError) Error() string {
	if e.Deadline {
		return fmt.Sprintf("ratelimit: a token takes %v, past the context's deadline", e.Wait)
	}
	return fmt.Sprintf("ratelimit: rate limited, next token in %v", e.Wait)
}

// Is makes errors.Is(err, ErrLimited) hold, and errors.Is(err,
// context.DeadlineExceeded) for a deadline refusal.
func (e *LimitedError) Is(target error) bool {
	return target == ErrLimited || (e.Deadline && target == context.DeadlineExceeded)
}

// Retryable reports true: the tokens will come, after Wait.
func (e *LimitedError) Retryable() bool { return true }

// RetryAfter tells the retry layer to wait exactly until the tokens are due.
func (e *LimitedError) RetryAfter() time.Duration { return e.Wait }

// Local reports true: the call was refused here and never reached the
// provider, so a circuit breaker does not count it.
func (e *LimitedError) Local() bool { return true }

// BurstError is the error of a call whose cost is more tokens than the
// bucket holds at once (its burst): no wait will ever admit it. Send fewer
// items per Batch, or raise the burst.
type BurstError struct {
	Cost, Burst int
}

// Error names the cost and the burst.
func (e *BurstError) Error() string {
	return fmt.Sprintf("ratelimit: a call costing %d tokens can never pass a bucket whose burst is %d", e.Cost, e.Burst)
}

// Is makes errors.Is(err, ErrLimited) hold.
func (e *BurstError) Is(target error) bool { return target == ErrLimited }

// Retryable reports false: retrying the same cost fails the same way.
func (e *BurstError) Retryable() bool { return false }

// Local reports true: the call never reached the provider.
func (e *BurstError) Local() bool { return true }

// Option configures a Runnable. Nil options, and options given nil
// arguments, are ignored.
type Option func(*config)

type config struct {
	failFast bool
	mp       metric.MeterProvider
}

// WithFailFast makes calls fail at once with a *LimitedError instead of
// waiting for a token.
func WithFailFast() Option { return func(c *config) { c.failFast = true } }

// WithMeterProvider sets the meter provider; the default is the global one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	}
}

// Runnable is a core.Runnable whose calls each take a token from a bucket
// first. It is safe for concurrent use.
type Runnable struct {
	inner    core.Runnable
	lim      *rate.Limiter
	failFast bool
	waits    metric.Float64Histogram
}

// New returns inner behind the token bucket lim. It reports an error when
// inner or lim is nil.
func New(inner core.Runnable, lim *rate.Limiter, opts ...Option) (*Runnable, error) {
	if inner == nil {
		return nil, errors.New("ratelimit: New: inner Runnable is nil")
	}
	if lim == nil {
		return nil, errors.New("ratelimit: New: rate.Limiter is nil")
	}
	var c config
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	r := &Runnable{inner: inner, lim: lim, failFast: c.failFast}
	var err error
	r.waits, err = version.Meter(ScopeName, c.mp).Float64Histogram("ratelimit.wait.duration",
		metric.WithDescription("Time calls waited for a token."), metric.WithUnit("s"))
	if err != nil {
		return nil, fmt.Errorf("ratelimit: metric ratelimit.wait.duration: %w", err)
	}
	return r, nil
}

// Middleware returns a core.Middleware that puts Runnables behind lim, all
// sharing it. It panics when lim is nil.
func Middleware(lim *rate.Limiter, opts ...Option) core.Middleware {
	if lim == nil {
		panic("ratelimit: Middleware: rate.Limiter is nil")
	}
	return func(inner core.Runnable) core.Runnable {
		r, err := New(inner, lim, opts...)
		if err != nil {
			panic(err)
		}
		return r
	}
}

// Invoke takes a token, then calls the inner Invoke.
func (r *Runnable) Invoke(ctx context.Context, input any, opts ...core.Option) (any, error) {
	if err := r.acquire(ctx, 1); err != nil {
		return nil, err
	}
	return r.inner.Invoke(ctx, input, opts...)
}

// Batch takes a token per input, all at once, then calls the inner Batch.
func (r *Runnable) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	if err := r.acquire(ctx, len(inputs)); err != nil {
		return nil, err
	}
	return r.inner.Batch(ctx, inputs, opts...)
}

// Stream takes a token, then calls the inner Stream.
func (r *Runnable) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	if err := r.acquire(ctx, 1); err != nil {
		return nil, err
	}
	return r.inner.Stream(ctx, input, opts...)
}

// Name returns the inner Runnable's name, if it has one.
func (r *Runnable) Name() string { return core.NameOf(r.inner) }

// Idempotent reports the inner Runnable's Idempotent, true when it does not
// say.
func (r *Runnable) Idempotent() bool { return core.IsIdempotent(r.inner) }

// acquire takes n tokens at once: now, after a wait, or not at all. A
// refused call spends none.
func (r *Runnable) acquire(ctx context.Context, n int) error {
	if n == 0 {
		return nil
	}
	now := time.Now()
	if r.lim.AllowN(now, n) {
		return nil
	}
	if burst := r.lim.Burst(); n > burst && r.lim.Limit() != rate.Inf {
		return &BurstError{Cost: n, Burst: burst}
	}
	res := r.lim.ReserveN(now, n)
	if !res.OK() {
		// A zero rate: the bucket never refills.
		return &LimitedError{Wait: rate.InfDuration}
	}
	wait := res.DelayFrom(now)
	if wait == 0 {
		return nil
	}
	if r.failFast {
		res.CancelAt(now)
		return &LimitedError{Wait: wait}
	}
	if dl, ok := ctx.Deadline(); ok && dl.Sub(now) < wait {
		res.CancelAt(now)
		return &LimitedError{Wait: wait, Deadline: true}
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("ratelimit.wait", trace.WithAttributes(AttrWait.Float64(wait.Seconds())))
	}
	r.waits.Record(ctx, wait.Seconds())
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		res.Cancel()
		return ctx.Err()
	}
}

// CallAttributes returns the inner Runnable's call-span attributes (see
// retry.CallAttributer), so they survive this decorator.
func (r *Runnable) CallAttributes() []attribute.KeyValue {
	if ca, ok := r.inner.(interface{ CallAttributes() []attribute.KeyValue }); ok {
		return ca.CallAttributes()
	}
	return nil
}

// Package breaker stops calling a provider that is down: a core.Runnable
// decorator over a github.com/sony/gobreaker/v2 circuit breaker.
//
// The circuit opens after consecutive failures (by default gobreaker's:
// more than 5), rejects calls while open with an *OpenError, lets probe
// calls through once its Timeout has passed (half-open) and closes again on
// their success. With WithSlowCalls it also opens on a slow-call rate, so
// that a brownout that answers late without errors moves traffic to a
// fallback. The retry layer classifies *OpenError as not retryable, so
// a retried call stops at once when the circuit opens: put the breaker
// inside the retry layer so that every attempt passes it.
//
// Cancellations by the caller count neither as failures nor as successes
// (a context ended with a cause of its own, such as the retry layer's
// per-attempt timeout or its abandoning of a stream attempt, counts as a
// failure). Refusals made on this side of the wire, errors whose Local()
// method reports true (a rate limiter's refusal, another
// circuit's rejection), count neither: they say nothing of the provider's
// health. Errors with a 4xx status other than 408 and 429 count as
// successes: the request, not the provider, was at fault (override with
// Settings.IsSuccessful). A Stream counts by its outcome when it ends: a
// failure if its last value is an error, whatever the consumer does
// afterwards. A call that panics counts as a failure, and the panic goes
// on to the caller unchanged.
//
// State changes go to the hooks (WithOnStateChange and Settings.OnStateChange),
// to the breaker.state_changes counter, and as a breaker.state_change event
// to the span of the call that caused them. Hooks are called in order,
// after the circuit's lock is released, so they may read State and Counts;
// they run on the goroutine of a call that caused or saw the change (for a
// Stream that ends, its forwarding goroutine, where a hook's panic is
// delivered as the stream's last value if it can still be).
package breaker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/batchcheck"
	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/internal/panics"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/internal/version"
)

// ScopeName is the OpenTelemetry instrumentation scope of the meter.
const ScopeName = "github.com/steadfast-go/steadfast/breaker"

// Attribute keys of the breaker's events and metrics.
const (
	attrName  = attribute.Key("breaker.name")
	attrFrom  = attribute.Key("breaker.from")
	attrTo    = attribute.Key("breaker.to")
	attrState = attribute.Key("breaker.state")
)

// OpenError is the error of a call the circuit rejected: open, or half-open
// with its probes already under way. It unwraps to gobreaker.ErrOpenState or
// gobreaker.ErrTooManyRequests.
type OpenError struct {
	Name string
	Err  error
}

func (e *OpenError) Error() string { return fmt.Sprintf("breaker %q: %v", e.Name, e.Err) }
func (e *OpenError) Unwrap() error { return e.Err }

// Retryable reports false: while the circuit is open, retries fail fast.
func (e *OpenError) Retryable() bool { return false }

// Local reports true: the call was rejected here and never reached the
// provider.
func (e *OpenError) Local() bool { return true }

var (
	// errCallerDone marks a call that ended because the caller's context
	// did: excluded from the circuit's counts.
	errCallerDone = errors.New("breaker: caller's context done")
	// errUnwound is counted for a call that panicked (or whose goroutine
	// exited) before it returned.
	errUnwound = errors.New("breaker: the call panicked")
	// errNoStream is the error of an inner Stream that returned neither a
	// channel nor an error.
	errNoStream error = permanentError("breaker: inner Stream returned neither a channel nor an error")
)

// permanentError is an error that the retry layer never retries.
type permanentError string

func (e permanentError) Error() string { return string(e) }

// Retryable reports false.
func (e permanentError) Retryable() bool { return false }

// Option configures a Runnable. Nil options, and options given nil
// arguments, are ignored.
type Option func(*config)

type config struct {
	onStateChange []func(name string, from, to gobreaker.State)
	mp            metric.MeterProvider
	slow          *slowCalls
}

// WithOnStateChange adds a hook called on every state change.
func WithOnStateChange(hook func(name string, from, to gobreaker.State)) Option {
	return func(c *config) {
		if hook != nil {
			c.onStateChange = append(c.onStateChange, hook)
		}
	}
}

// WithMeterProvider sets the meter provider; the default is the global one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	}
}

// Runnable is a core.Runnable behind a circuit breaker. It is safe for
// concurrent use.
type Runnable struct {
	inner   core.Runnable
	cb      *gobreaker.TwoStepCircuitBreaker[any]
	name    string
	changes *stateChanges
	// slow counts slow calls (WithSlowCalls), nil when they are not, and
	// excluded is the circuit's rule for what it does not count.
	slow     *slowCalls
	excluded func(error) bool
}

// New returns inner behind a new circuit configured by st. Settings left
// zero take gobreaker's defaults; st.IsExcluded and st.IsSuccessful, when
// set, are consulted after the rules of the package doc. It reports an
// error when inner is nil or WithSlowCalls's values are out of range.
func New(inner core.Runnable, st gobreaker.Settings, opts ...Option) (*Runnable, error) {
	if inner == nil {
		return nil, errors.New("breaker: New: inner Runnable is nil")
	}
	var c config
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	if c.slow != nil {
		if err := c.slow.validate(); err != nil {
			return nil, err
		}
	}
	changes, err := version.Meter(ScopeName, c.mp).Int64Counter("breaker.state_changes",
		metric.WithDescription("Circuit state changes."), metric.WithUnit("{change}"))
	if err != nil {
		return nil, fmt.Errorf("breaker: metric breaker.state_changes: %w", err)
	}
	userExcluded, userSuccessful := st.IsExcluded, st.IsSuccessful
	st.IsExcluded = func(err error) bool {
		return err != errSlow && (errors.Is(err, errCallerDone) || errproto.Local(err) || errors.Is(err, streams.ErrNotResumable) ||
			(userExcluded != nil && userExcluded(err)))
	}
	st.IsSuccessful = func(err error) bool {
		if err == errSlow {
			return false
		}
		if userSuccessful != nil {
			return userSuccessful(err)
		}
		return err == nil || callersFault(err)
	}
	userChange, name := st.OnStateChange, st.Name
	q := &stateChanges{deliver: func(sc stateChange) {
		changes.Add(context.Background(), 1, metric.WithAttributes(
			attrName.String(name), attrFrom.String(sc.from.String()), attrTo.String(sc.to.String())))
		if userChange != nil {
			userChange(name, sc.from, sc.to)
		}
		for _, hook := range c.onStateChange {
			hook(name, sc.from, sc.to)
		}
	}}
	st.OnStateChange = q.add
	if slow := c.slow; slow != nil {
		st.OnStateChange = func(name string, from, to gobreaker.State) { slow.reset(); q.add(name, from, to) }
		userTrip := st.ReadyToTrip
		st.ReadyToTrip = func(counts gobreaker.Counts) bool {
			if userTrip == nil {
				return counts.ConsecutiveFailures > 5 || slow.tripped() // gobreaker's default, and the rate
			}
			return userTrip(counts) || slow.tripped()
		}
	}
	return &Runnable{inner: inner, cb: gobreaker.NewTwoStepCircuitBreaker[any](st), name: name, changes: q,
		slow: c.slow, excluded: st.IsExcluded}, nil
}

// Middleware returns a core.Middleware that puts each Runnable it wraps
// behind a circuit of its own. It panics if New would fail.
func Middleware(st gobreaker.Settings, opts ...Option) core.Middleware {
	return func(inner core.Runnable) core.Runnable {
		r, err := New(inner, st, opts...)
		if err != nil {
			panic(err)
		}
		return r
	}
}

// State returns the circuit's state.
func (r *Runnable) State() gobreaker.State {
	s := r.cb.State() // may move an open circuit to half-open
	r.changes.flush()
	return s
}

// Counts returns the circuit's counts in the current period.
func (r *Runnable) Counts() gobreaker.Counts {
	c := r.cb.Counts()
	r.changes.flush()
	return c
}

// Unwrap returns the inner Runnable, so core.NameOf, core.IsIdempotent
// and the call span's attributes see through the breaker.
func (r *Runnable) Unwrap() core.Runnable { return r.inner }

// Invoke calls the inner Invoke if the circuit allows it.
func (r *Runnable) Invoke(ctx context.Context, input any, opts ...core.Option) (any, error) {
	t, err := r.allow(ctx)
	if err != nil {
		return nil, err
	}
	defer t.reportIfUnwinding()
	out, err := r.inner.Invoke(ctx, input, opts...)
	t.report(callerOutcome(ctx, err))
	return out, err
}

// Batch calls the inner Batch if the circuit allows it. The batch counts as
// one call: a failure when every item failed, else a success.
func (r *Runnable) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	t, err := r.allow(ctx)
	if err != nil {
		return nil, err
	}
	defer t.reportIfUnwinding()
	outs, err := r.inner.Batch(ctx, inputs, opts...)
	counted := err
	if be, ok := errors.AsType[*core.BatchError](err); ok && be != nil && batchcheck.Failed(be) < len(inputs) {
		counted = nil // some items went through: the provider answers
	}
	t.report(callerOutcome(ctx, counted))
	return outs, err
}

// Stream calls the inner Stream if the circuit allows it. The stream counts
// when it ends: a failure if its last value is an error, else a success.
func (r *Runnable) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	return r.stream(ctx, func() (<-chan any, error) { return r.inner.Stream(ctx, input, opts...) })
}

// Resume continues a stream through the circuit: a call like any other,
// admitted, counted and forwarded as Stream is. It answers
// core.ErrNotResumable, without asking the circuit, when the inner
// Runnable is not a core.Resumer.
func (r *Runnable) Resume(ctx context.Context, input any, last any, opts ...core.Option) (<-chan any, error) {
	resumer, ok := r.inner.(core.Resumer)
	if !ok {
		return nil, fmt.Errorf("breaker %q: inner Runnable cannot resume: %w", r.name, streams.ErrNotResumable)
	}
	return r.stream(ctx, func() (<-chan any, error) { return resumer.Resume(ctx, input, last, opts...) })
}

// CanResume reports whether the Runnable it wraps can resume the stream
// of ctx's call.
func (r *Runnable) CanResume(ctx context.Context) bool { return streams.CanResume(ctx, r.inner) }

// stream is Stream, with open making the inner stream.
func (r *Runnable) stream(ctx context.Context, open func() (<-chan any, error)) (<-chan any, error) {
	t, err := r.allow(ctx)
	if err != nil {
		return nil, err
	}
	defer t.reportIfUnwinding()
	ch, err := open()
	if err == nil && ch == nil {
		err = errNoStream
	}
	if err != nil {
		t.report(callerOutcome(ctx, err))
		return nil, err
	}
	out := make(chan any)
	fwd := t
	t.reported = true // the forwarding goroutine reports
	go fwd.forward(ctx, ch, out)
	return out, nil
}

// forward passes the stream's values on and, when it ends, reports its
// outcome, before a last error value reaches the consumer: a retry outside
// that tries again at once finds the failure counted.
func (t *ticket) forward(ctx context.Context, ch <-chan any, out chan<- any) {
	defer close(out)
	cfg := streams.PumpConfig{HoldErrors: true}
	if t.r.slow != nil {
		cfg.Seen = t.seen
	}
	res := streams.Pump(ctx, ch, out, cfg)
	defer func() {
		// A state-change hook panicked. It is the stream's last value
		// unless the stream has an error value of its own.
		if v := recover(); v != nil && res.End != streams.Failed {
			streams.Send(ctx, out, panics.Recovered(v))
		}
		if res.End == streams.Failed {
			streams.Send(ctx, out, res.Err)
		}
	}()
	switch res.End {
	case streams.Completed:
		t.report(nil)
	case streams.Failed: // an error value fixes the outcome
		t.report(res.Err)
	default:
		t.report(contextOutcome(ctx))
	}
}

// ticket is one call the circuit admitted. Its outcome is reported exactly
// once, also when the call panics, so a half-open circuit's probe slot is
// never kept for ever.
type ticket struct {
	r        *Runnable
	ctx      context.Context
	done     func(error)
	reported bool
	// start is when the circuit let the call through, and first how long
	// its stream's first chunk took: read only to time slow calls.
	start time.Time
	first time.Duration
}

// seen times a stream's first chunk.
func (t *ticket) seen(any) {
	if t.first == 0 {
		t.first = max(time.Since(t.start), 1)
	}
}

func (r *Runnable) allow(ctx context.Context) (ticket, error) {
	done, err := r.cb.Allow() // the one lock round to admit
	r.changes.flush()         // Allow may move an open circuit to half-open
	if err != nil {
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			span.AddEvent("breaker.rejected", trace.WithAttributes(
				attrName.String(r.name), attrState.String(rejectedIn(err).String())))
		}
		return ticket{}, &OpenError{Name: r.name, Err: err}
	}
	t := ticket{r: r, ctx: ctx, done: done}
	if r.slow != nil {
		t.start = time.Now()
	}
	return t, nil
}

// reportIfUnwinding, deferred, counts a call that panicked as a failure.
func (t *ticket) reportIfUnwinding() {
	if !t.reported {
		t.report(errUnwound)
	}
}

// report tells the circuit how the call ended, in the one lock round to
// report, then the hooks and, when the circuit changed state meanwhile,
// the call's span, from the queue of changes.
func (t *ticket) report(err error) {
	t.reported = true
	r := t.r
	if r.slow != nil && !r.excluded(err) {
		first := t.first
		if first == 0 {
			first = time.Since(t.start)
		}
		err = r.slow.record(time.Now(), first, err)
	}
	seq := r.changes.seq.Load()
	t.done(err)
	if r.changes.seq.Load() != seq {
		if span := trace.SpanFromContext(t.ctx); span.IsRecording() {
			for _, c := range r.changes.since(seq) {
				span.AddEvent("breaker.state_change", trace.WithAttributes(
					attrName.String(r.name), attrFrom.String(c.from.String()), attrTo.String(c.to.String())))
			}
		}
	}
	r.changes.flush()
}

// rejectedIn is the state in which the circuit rejected a call with err:
// open, or half-open with its probes under way.
func rejectedIn(err error) gobreaker.State {
	if errors.Is(err, gobreaker.ErrTooManyRequests) {
		return gobreaker.StateHalfOpen
	}
	return gobreaker.StateOpen
}

// callerOutcome is err, or errCallerDone when the call failed because the
// caller's context ended.
func callerOutcome(ctx context.Context, err error) error {
	if err != nil && callerEnded(ctx) {
		return errCallerDone
	}
	return err
}

// contextOutcome is the outcome of a stream cut short by its context:
// errCallerDone for the caller's own cancellation or deadline, else the
// context's cause (a retry layer's abandoning of the attempt, say).
func contextOutcome(ctx context.Context) error {
	if callerEnded(ctx) {
		return errCallerDone
	}
	return context.Cause(ctx)
}

// callerEnded reports a context cancelled, or past its deadline, by the
// caller. A context ended with a cause of its own, such as the retry
// layer's per-attempt timeout, is the provider being slow: not excluded.
func callerEnded(ctx context.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	cause := context.Cause(ctx)
	return cause == context.Canceled || cause == context.DeadlineExceeded
}

// callersFault reports a 4xx status other than 408 and 429: the request
// was wrong, the provider is healthy.
func callersFault(err error) bool {
	code, ok := errproto.Status(err)
	return ok && code >= 400 && code < 500 && code != 408 && code != 429
}

package fallback

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/internal/route"
	"github.com/steadfast-go/steadfast/internal/run"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/internal/usage"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// Runnable is a core.Runnable over an ordered list of candidates. It is
// safe for concurrent use.
type Runnable struct {
	candidates []core.Runnable
	names      []string // each candidate's Name(), or "" when it has none
	resumable  bool     // a candidate can resume (core.Resumer)
	// owner is this fallback's entry in each call's core.State: the
	// candidate its stream committed on (durable, for a Resume in another
	// process).
	owner    *core.StateKey[int]
	switchIf func(error) bool
	input    func(candidate int, input any) any
	// maxRestarts bounds, per call, the restarts of a committed stream on
	// the next candidate, for a caller that accepts core.Reset.
	maxRestarts int
	tel         telemetry
	// all is every candidate's index, in order: the way of a call with no
	// route constraints. routes are the candidates' tags and prices, known
	// every tag among them, priced whether one has a price (constraints.go).
	all    []int
	routes []route.Candidate
	known  []string
	priced bool
}

// New returns a Runnable over candidates, tried in order. It reports an
// error when there is no candidate or one of them is nil.
func New(candidates []core.Runnable, opts ...Option) (*Runnable, error) {
	if len(candidates) == 0 {
		return nil, errors.New("fallback: New: no candidates")
	}
	for i, c := range candidates {
		if c == nil {
			return nil, fmt.Errorf("fallback: New: candidate %d is nil", i)
		}
	}
	c := config{maxRestarts: 1}
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	if c.maxRestarts < 0 {
		return nil, fmt.Errorf("fallback: New: WithMaxRestarts(%d): must not be negative", c.maxRestarts)
	}
	r := &Runnable{candidates: slices.Clone(candidates), switchIf: c.switchIf, input: c.input, maxRestarts: c.maxRestarts}
	if r.switchIf == nil {
		types := slices.Clone(c.switchOn)
		r.switchIf = func(err error) bool { return CannotServe(err) || hasErrorType(err, types) }
	}
	for _, cand := range r.candidates {
		r.names = append(r.names, core.NameOf(cand))
		r.resumable = r.resumable || streams.CanResume(context.Background(), cand)
	}
	r.owner = core.NewStateKey[int]("fallback.candidate:" + strings.Join(r.names, ","))
	if err := r.tagCandidates(); err != nil {
		return nil, err
	}
	var err error
	if r.tel, err = newTelemetry(c.tp, c.mp); err != nil {
		return nil, err
	}
	return r, nil
}

// CannotServe is the default rule for moving to the next candidate: the
// failure says this candidate cannot serve now. It holds for a *retry.Error
// that ran out (outcome exhausted, budget_exhausted or
// retry_after_too_long), whose route was silent (silent_timeout: the
// provider sent nothing before the attempt's timeout, or closed the
// connection after a long wait), or that stopped for the deadline (outcome
// deadline) while the caller's context is still live: its next attempt, or a
// limiter's permit, would come too late, and the next candidate may answer
// in time (a fallback never moves once the caller's context is done,
// whatever the rule); for a prompt over the candidate's context length
// (error.type context_length_exceeded, or a message llmhttp.ParseOverflow
// reads), which a model with a larger window may serve; and for a refusal
// made on this side of the wire (a Local() method: an open circuit, a rate
// limiter's refusal). It never holds for a failure that the caller's
// cancellation caused.
func CannotServe(err error) bool {
	switch {
	case errors.Is(err, errproto.ErrRouteSpent):
		// Whatever the last attempt's error was (one the retry layer
		// cancelled to move on may hold context.Canceled). For the
		// deadline: next asks whether the caller's context is live.
		return true
	case errors.Is(err, context.Canceled):
		return false // the caller's own cancellation, not the candidate
	}
	return errproto.Local(err) || overflows(err) || errproto.Type(err) == string(retry.OutcomeSilentTimeout)
}

// overflows reports whether err says the prompt is over the context length
// of the model that answered.
func overflows(err error) bool {
	if errproto.Type(err) == "context_length_exceeded" {
		return true
	}
	_, ok := llmhttp.ParseOverflow(err)
	return ok
}

// routeContext returns the context of candidate i's call: marked when one
// comes after it, so that its retry layer stops at the first silent
// attempt rather than retry it, and the rule is asked about that failure.
func (r *Runnable) routeContext(ctx context.Context, k int, way []int) context.Context {
	if k+1 < len(way) {
		return route.WithAlternative(ctx)
	}
	return ctx
}

// hasErrorType reports whether err's error.type is one of types.
func hasErrorType(err error, types []string) bool {
	return len(types) > 0 && slices.Contains(types, errproto.Type(err))
}

// next reports whether a call that failed with err on the k-th candidate
// of its way moves to the one after: there is one, the caller's context is
// live, and the rule says so.
func (r *Runnable) next(ctx context.Context, k int, way []int, err error) bool {
	return k+1 < len(way) && ctx.Err() == nil && r.switchIf(err)
}

// inputFor returns the input of candidate i.
func (r *Runnable) inputFor(i int, input any) any {
	if r.input == nil {
		return input
	}
	return r.input(i, input)
}

// Name returns the first candidate's Name, so that an outer retry layer
// names the operation after the preferred model.
func (r *Runnable) Name() string { return r.names[0] }

// Idempotent reports true only when every candidate is idempotent.
func (r *Runnable) Idempotent() bool {
	for _, c := range r.candidates {
		if !core.IsIdempotent(c) {
			return false
		}
	}
	return true
}

// Error is the failure of a call that no candidate served: the failures of
// the candidates tried, in order. errors.Is and errors.As reach each.
type Error struct {
	// Errs are the failures of the candidates tried, Errs[i] for
	// candidate i.
	Errs []error
	// Names are those candidates' names ("" for one without a Name).
	Names []string
}

// Error names each candidate tried and its failure.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fallback: %d candidate(s) failed", len(e.Errs))
	for i, err := range e.Errs {
		name := ""
		if i < len(e.Names) && e.Names[i] != "" {
			name = " " + e.Names[i]
		}
		fmt.Fprintf(&b, "; [%d%s] %v", i, name, err)
	}
	return b.String()
}

// Unwrap returns every candidate's failure.
func (e *Error) Unwrap() []error { return e.Errs }

// ErrorType names the failure for telemetry by its last candidate's
// error.type.
func (e *Error) ErrorType() string { return errproto.LastType(e.Errs) }

// newError is the *Error of a call whose way's first candidates failed
// with errs.
func (r *Runnable) newError(errs []error, way []int) *Error {
	names := make([]string, len(errs))
	for k := range errs {
		names[k] = r.names[way[k]]
	}
	return &Error{Errs: errs, Names: names}
}

// Invoke calls the candidates in order until one succeeds or the failure
// of one says not to move on.
func (r *Runnable) Invoke(ctx context.Context, input any, opts ...core.Option) (any, error) {
	ctx, c := r.tel.begin(ctx, callspan.Invoke)
	defer c.EndIfUnwinding()
	ctx, way, err := r.way(ctx)
	if err != nil {
		c.fail(err)
		return nil, err
	}
	var errs []error
	for k, i := range way {
		cctx, tokens := usage.Sub(ctx) // a failed candidate's tokens are thrown away
		out, err := r.invokeOn(cctx, k, way, input, opts)
		if err == nil {
			c.succeed(i, r.names[i])
			return out, nil
		}
		tokens.Discard()
		errs = append(errs, err)
		if !r.next(ctx, k, way, err) {
			break
		}
		c.switched(ctx, i, r.names, err)
	}
	e := r.newError(errs, way)
	c.fail(e)
	return nil, e
}

// invokeOn invokes the way's k-th candidate, with its draw on the run's
// budget, if any.
func (r *Runnable) invokeOn(ctx context.Context, k int, way []int, input any, opts []core.Option) (any, error) {
	ctx, ticket, err := run.Take(ctx, 1)
	if err != nil {
		return nil, err
	}
	i := way[k]
	out, err := r.candidates[i].Invoke(r.routeContext(ctx, k, way), r.inputFor(i, input), opts...)
	ticket.Settle(err)
	return out, err
}

// Option configures a Runnable. Nil options, and options given nil
// arguments, are ignored.
type Option func(*config)

type config struct {
	switchIf    func(error) bool
	switchOn    []string
	input       func(int, any) any
	maxRestarts int
	tp          trace.TracerProvider
	mp          metric.MeterProvider
}

// WithSwitchIf replaces the rule for moving to the next candidate
// (CannotServe, with the types of WithSwitchOn). The rule is asked about
// each failure of a candidate that has one after it, once the failure has
// happened, and about nothing else (never at construction, never for the
// last candidate). A candidate that has one after it is told so, and its
// retry layer ends its turn early: at its first silent attempt or stall
// (outcome silent_timeout), at a malformed event, or after one retry of a
// route that failed twice in a row (outcome exhausted); the rule is then
// asked about that failure. Whatever the rule, a call never moves on once
// the caller's context is done.
func WithSwitchIf(f func(error) bool) Option {
	return func(c *config) {
		if f != nil {
			c.switchIf = f
		}
	}
}

// WithSwitchOn adds error types to the default rule: a failure whose
// error.type is in types moves to the next candidate too. The provider
// adapters name their errors by the provider's code
// (WithSwitchOn("context_length_exceeded", "content_filter")); a status
// code without one is its error.type ("400").
func WithSwitchOn(types ...string) Option {
	return func(c *config) { c.switchOn = append(c.switchOn, types...) }
}

// WithInput translates the input for each candidate: f gets the
// candidate's index and the caller's input and returns that candidate's
// input. It must not modify the caller's input.
func WithInput(f func(candidate int, input any) any) Option {
	return func(c *config) {
		if f != nil {
			c.input = f
		}
	}
}

// WithMaxRestarts bounds the restarts of one Stream call (default 1; 0
// turns them off). For a caller that passed core.WithResets, a stream
// that fails after its first chunk reached the consumer goes on as a
// core.Reset and the next candidate's stream of the original input
// (WithInput applied): never the partial answer sent as a prefill, which
// a candidate may refuse. Any failure restarts but a panic and the
// caller's own deadline or cancellation; a candidate that fails before
// its first chunk in a restart moves the restart on by the usual rule
// (CannotServe, or WithSwitchIf), and is no restart of its own. A stream
// that delivered a tool call is restarted only when every candidate says
// it is idempotent (implements core.Idempotency and reports true). New
// reports an error for a negative n.
func WithMaxRestarts(n int) Option {
	return func(c *config) { c.maxRestarts = n }
}

// WithTracerProvider sets the tracer provider; the default is the global
// one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) {
		if tp != nil {
			c.tp = tp
		}
	}
}

// WithMeterProvider sets the meter provider; the default is the global
// one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	}
}

// CallAttributes returns the first candidate's call-span attributes (its
// CallAttributes method, the retry package's doc says), through the
// decorators that wrap it.
func (r *Runnable) CallAttributes() []attribute.KeyValue {
	return callspan.Attributes(r.candidates[0])
}

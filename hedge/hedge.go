package hedge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/retry"
)

// errLost is the cause with which an attempt that did not win is
// cancelled: its message says so.
var errLost = errors.New("hedge: another attempt answered first")

// Config is a hedging policy.
type Config struct {
	// Delay is how long a call waits for an answer before sending the next
	// attempt. With Quantile, it is the floor of the adaptive delay.
	Delay time.Duration
	// Quantile, when set, is in (0, 1): the delay is that quantile of the
	// latencies of recent successful attempts (0.95 is their p95), at
	// least Delay and at most MaxDelay. Until enough attempts have
	// succeeded, the delay is Delay.
	Quantile float64
	// MaxDelay caps the adaptive delay; 0 means no cap.
	MaxDelay time.Duration
	// MaxHedges is the most attempts a call makes beyond the first; it
	// must be at least 1.
	MaxHedges int
}

// validate reports the first invalid field; New asks it.
func (c Config) validate() error {
	switch {
	case c.MaxHedges < 1:
		return fmt.Errorf("hedge: Config.MaxHedges is %d, must be at least 1", c.MaxHedges)
	case c.Delay < 0:
		return fmt.Errorf("hedge: Config.Delay is %v, must not be negative", c.Delay)
	case c.Quantile != 0 && !(c.Quantile > 0 && c.Quantile < 1):
		return fmt.Errorf("hedge: Config.Quantile is %v, must be in (0, 1), or 0 for a fixed delay", c.Quantile)
	case c.MaxDelay < 0:
		return fmt.Errorf("hedge: Config.MaxDelay is %v, must not be negative", c.MaxDelay)
	case c.MaxDelay > 0 && c.MaxDelay < c.Delay:
		return fmt.Errorf("hedge: Config.MaxDelay is %v, must be at least Delay (%v)", c.MaxDelay, c.Delay)
	case c.MaxHedges > math.MaxInt16:
		return fmt.Errorf("hedge: Config.MaxHedges is %d, must be at most %d", c.MaxHedges, math.MaxInt16)
	}
	return nil
}

// Runnable is a core.Runnable whose Invoke and Stream calls are hedged. It
// is safe for concurrent use.
type Runnable struct {
	targets  []core.Runnable // the inner Runnable, then the alternates; attempt k goes to targets[k % len]
	cfg      Config
	budget   retry.Budget
	hedged   bool // every target is idempotent
	invokeLt *window
	streamLt *window
	tel      telemetry
	// owner is this hedge's entry in each call's core.State, with
	// alternates: the target the call's stream won on (durable).
	owner *core.StateKey[int]
}

// New returns inner hedged under cfg. It reports an error when inner or an
// alternate is nil, or cfg is invalid.
func New(inner core.Runnable, cfg Config, opts ...Option) (*Runnable, error) {
	if inner == nil {
		return nil, errors.New("hedge: New: inner Runnable is nil")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var c config
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	r := &Runnable{targets: append([]core.Runnable{inner}, c.alternates...), cfg: cfg, budget: c.budget, hedged: true}
	for i, t := range r.targets {
		if t == nil {
			return nil, fmt.Errorf("hedge: New: alternate %d is nil", i-1)
		}
		r.hedged = r.hedged && core.IsIdempotent(t)
	}
	names := make([]string, len(r.targets))
	for i, t := range r.targets {
		names[i] = core.NameOf(t)
	}
	r.owner = core.NewStateKey[int]("hedge.target:" + strings.Join(names, ","))
	if cfg.Quantile > 0 {
		r.invokeLt, r.streamLt = newWindow(cfg.Quantile), newWindow(cfg.Quantile)
	}
	var err error
	if r.tel, err = newTelemetry(c.tp, c.mp); err != nil {
		return nil, err
	}
	return r, nil
}

// Option configures a Runnable. Nil options, and options given nil
// arguments, are ignored.
type Option func(*config)

type config struct {
	alternates []core.Runnable
	budget     retry.Budget
	tp         trace.TracerProvider
	mp         metric.MeterProvider
}

// WithAlternates sends the hedges to other Runnables in turn: hedge k goes
// to the k-th alternate, then round again with the inner Runnable first.
func WithAlternates(rs ...core.Runnable) Option {
	return func(c *config) { c.alternates = append(c.alternates, rs...) }
}

// WithBudget asks b before each hedge (not before a call's first attempt);
// a refused hedge is not sent. Share the Budget of the RetryRunnables that
// call the same provider.
func WithBudget(b retry.Budget) Option {
	return func(c *config) {
		if b != nil {
			c.budget = b
		}
	}
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

// Unwrap returns the inner Runnable, so core.NameOf and
// the call span's attributes see through the hedge.
func (r *Runnable) Unwrap() core.Runnable { return r.targets[0] }

// Idempotent reports whether every target is idempotent.
func (r *Runnable) Idempotent() bool { return r.hedged }

// Error is the failure of a hedged call that no attempt answered: the
// failures of the attempts that failed, in the order they failed, and,
// when the caller's context ended the call first, that context's error
// last. errors.Is and errors.As reach each.
type Error struct {
	Errs []error
}

// Error says how many attempts failed and quotes each failure.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "hedge: %d attempt(s) failed", len(e.Errs))
	for i, err := range e.Errs {
		fmt.Fprintf(&b, "; [%d] %v", i, err)
	}
	return b.String()
}

// Unwrap returns the failures.
func (e *Error) Unwrap() []error { return e.Errs }

// ErrorType names the failure for telemetry by its last failure's
// error.type.
func (e *Error) ErrorType() string { return errproto.LastType(e.Errs) }

// delay returns the wait before the next hedge.
func (r *Runnable) delay(w *window) time.Duration {
	d := r.cfg.Delay
	if w != nil {
		d = max(d, w.quantile())
	}
	if r.cfg.MaxDelay > 0 {
		d = min(d, r.cfg.MaxDelay)
	}
	return d
}

// Invoke calls the inner Runnable and hedges it: see the package doc.
func (r *Runnable) Invoke(ctx context.Context, input any, opts ...core.Option) (any, error) {
	if !r.hedged {
		return r.targets[0].Invoke(ctx, input, opts...)
	}
	win, err := r.race(ctx, callspan.Invoke, r.invokeLt, func(ctx context.Context, t core.Runnable) answer {
		out, err := t.Invoke(ctx, input, opts...)
		return answer{out: out, err: err}
	})
	if err != nil {
		return nil, err
	}
	win.cancel(errLost) // its call has returned: release its context
	return win.out, nil
}

// Batch calls the inner Runnable's Batch, unhedged.
func (r *Runnable) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return r.targets[0].Batch(ctx, inputs, opts...)
}

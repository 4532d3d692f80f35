package retry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"

	"go.opentelemetry.io/otel/attribute"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/genai"
)

// RetryRunnable wraps a core.Runnable and retries its transient failures with
// capped exponential backoff and jitter, honouring the caller's context and
// the server's Retry-After hints, and records every attempt and backoff in
// OpenTelemetry.
//
// Invoke retries the call; Batch re-sends only the failed items; Stream
// retries creation and the wait for the first chunk, and never delivers a
// chunk twice: after the first chunk, a failure ends the stream unless
// ResumeStreams is set and the inner Runnable can resume (a core.Resumer
// whose CanResume says so), in
// which case the stream is resumed after the last chunk delivered.
//
// Concurrency: a RetryRunnable is safe for concurrent use. Invoke and Batch
// start no goroutine and stop every timer they start; Stream starts one,
// which forwards the chunks and ends when the stream ends or its context is
// done. Hooks (WithOnRetry), the Budget and the logger run on the goroutine
// making the attempts: the caller's for Invoke, Batch and a Stream's first
// creation; the stream's forwarding goroutine for a Stream's later
// attempts.
//
// Panics: a panic of the inner Runnable, a hook, the Budget or the logger
// on the caller's goroutine propagates to the caller with its value
// unchanged, after the call and attempt spans are ended (status Error,
// error.type "panic") and the attempt's context and timers are released. A
// panic on the stream's forwarding goroutine, where no caller could
// recover it, ends the stream with an *Error (outcome not_retryable, or
// committed after the first chunk) wrapping a *core.PanicError, as its
// last value; one after the last value was delivered (in the logger, say)
// cannot be delivered and is dropped.
type RetryRunnable struct {
	inner    core.Runnable
	cfg      RetryConfig
	policies map[string]*RetryConfig
	name     string           // core.NameOf(inner)
	idem     core.Idempotency // the inner chain's, if it says
	// resumer is the inner Runnable when it is a core.Resumer whose
	// CanResume, asked once, here, says it can resume a stream; a stream
	// that breaks asks it again for that call before it backs off, so a
	// Resume that cannot happen never costs a backoff, a budget's token or
	// an attempt.
	resumer core.Resumer
	budget  Budget
	onRetry []func(ctx context.Context, ev RetryEvent)
	logger  *slog.Logger
	random  func() float64
	tel     *telemetry
	// callAttrs are the inner Runnable's CallAttributes.
	callAttrs []attribute.KeyValue
	// bare is plain(), worked out once: Invoke makes its first attempt
	// bare (fast.go).
	bare bool
}

// New returns a RetryRunnable that retries inner's failures under cfg. It
// reports an error when inner is nil or a policy is invalid.
func New(inner core.Runnable, cfg RetryConfig, opts ...Option) (*RetryRunnable, error) {
	if inner == nil {
		return nil, errors.New("retry: New: inner Runnable is nil")
	}
	r, err := configure(cfg, opts)
	if err != nil {
		return nil, err
	}
	r.bind(inner)
	return r, nil
}

// NewRetryRunnable is like New but panics when New would return an error.
// Use it where inner and cfg are constants of the program.
func NewRetryRunnable(inner core.Runnable, cfg RetryConfig, opts ...Option) *RetryRunnable {
	r, err := New(inner, cfg, opts...)
	if err != nil {
		panic(err)
	}
	return r
}

// Middleware returns a core.Middleware that wraps a Runnable in a
// RetryRunnable. It validates cfg and the options at once and panics on an
// invalid policy, so a bad configuration fails at start-up, not on a call.
// The Runnables it wraps share one set of telemetry instruments.
func Middleware(cfg RetryConfig, opts ...Option) core.Middleware {
	base, err := configure(cfg, opts)
	if err != nil {
		panic(fmt.Errorf("retry: Middleware: %w", err))
	}
	return func(inner core.Runnable) core.Runnable {
		if inner == nil {
			panic("retry: Middleware: inner Runnable is nil")
		}
		r := *base
		r.bind(inner)
		return &r
	}
}

// configure builds a RetryRunnable without its inner Runnable.
func configure(cfg RetryConfig, opts []Option) (*RetryRunnable, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	r := &RetryRunnable{
		cfg:     cfg,
		budget:  o.budget,
		onRetry: o.onRetry,
		logger:  o.logger,
		random:  o.random,
	}
	if r.random == nil {
		r.random = rand.Float64
	}
	if len(o.policies) > 0 {
		r.policies = make(map[string]*RetryConfig, len(o.policies))
		for op, p := range o.policies {
			if err := p.Validate(); err != nil {
				if ce, ok := errors.AsType[*configError](err); ok {
					ce.Operation = op
				}
				return nil, err
			}
			r.policies[op] = &p
		}
	}
	tel, err := newTelemetry(&o)
	if err != nil {
		return nil, err
	}
	r.tel = tel
	return r, nil
}

func (r *RetryRunnable) bind(inner core.Runnable) {
	r.inner = inner
	r.name = core.NameOf(inner)
	r.idem, _ = core.Find[core.Idempotency](inner)
	r.callAttrs = callspan.Attributes(inner)
	if r.tel.genAI != nil && genai.IsInference(r.callAttrs) {
		r.callAttrs = nil // the inference spans carry them, not the call span
	}
	if resumer, ok := inner.(core.Resumer); ok && resumer.CanResume(context.Background()) {
		r.resumer = resumer
	}
	r.bare = r.plain()
}

// Unwrap returns the inner Runnable, so core.NameOf, core.IsIdempotent and
// the call span's attributes (a CallAttributes method) see through the
// retry layer.
func (r *RetryRunnable) Unwrap() core.Runnable { return r.inner }

// operation is a call's operation: the one its options name, else the
// inner Runnable's name.
func (r *RetryRunnable) operation(opts []core.Option) string {
	if op := core.OperationFrom(opts...); op != "" {
		return op
	}
	return r.name
}

// policy returns the policy of operation.
func (r *RetryRunnable) policy(operation string) *RetryConfig {
	if r.policies != nil {
		if p, ok := r.policies[operation]; ok {
			return p
		}
	}
	return &r.cfg
}

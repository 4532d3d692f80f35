package retry

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Option wires a RetryRunnable to its surroundings: telemetry providers, a
// logger, hooks, a budget and per-operation policies. Nil arguments are
// ignored.
type Option func(*options)

type options struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	logger         *slog.Logger
	onRetry        []func(context.Context, RetryEvent)
	budget         Budget
	policies       map[string]RetryConfig
	random         func() float64 // test seam for jitter; nil means math/rand/v2
}

// RetryEvent describes a retry about to happen, as seen by WithOnRetry hooks.
type RetryEvent struct {
	// Operation is the call's resolved operation, "" when it has none.
	Operation string
	// Method is "invoke", "batch" or "stream".
	Method string
	// Attempt is the number (1-based) of the attempt that failed.
	Attempt int
	// Err is that attempt's error.
	Err error
	// Delay is the backoff before the next attempt.
	Delay time.Duration
	// Source says where Delay came from: the computed backoff, the
	// server's hint, or the budget's pacing.
	Source BackoffSource
	// Items is, for Batch, the number of items about to be sent again;
	// 1 for Invoke and Stream.
	Items int
}

// WithTracerProvider sets the provider of the tracer; the default is the
// global provider (otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) {
		if tp != nil {
			o.tracerProvider = tp
		}
	}
}

// WithMeterProvider sets the provider of the meter; the default is the
// global provider (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) {
		if mp != nil {
			o.meterProvider = mp
		}
	}
}

// WithLogger makes the RetryRunnable log one WARN record for each call that
// finally fails. Without it, nothing is logged. The record is written on
// the goroutine that ends the call, as for WithOnRetry's hooks.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithOnRetry adds a hook called before each backoff: keep it quick.
// Several hooks may be added; they run in order. A hook runs on the
// goroutine making the attempts: the caller's for Invoke, Batch and a
// Stream's first creation, the stream's forwarding goroutine for a Stream's
// retries after its creation (an error value or FirstChunkTimeout before
// the first chunk). A hook that panics on the caller's goroutine panics the
// call; on the forwarding goroutine the panic ends the stream with a
// *core.PanicError as its last value (see RetryRunnable).
func WithOnRetry(hook func(context.Context, RetryEvent)) Option {
	return func(o *options) {
		if hook != nil {
			o.onRetry = append(o.onRetry, hook)
		}
	}
}

// WithBudget makes every retry ask b for permission. Share one Budget among
// the RetryRunnables that call the same provider so that, when it is down,
// retries stop multiplying the load on it. b is called on the goroutine
// making the attempts, as WithOnRetry's hooks are.
func WithBudget(b Budget) Option {
	return func(o *options) {
		if b != nil {
			o.budget = b
		}
	}
}

// WithOperationConfig sets the policy of one operation. A call's operation
// is core.WithOperation on the call, else the inner Runnable's Name(); calls
// of operations without their own policy use the RetryConfig given to New.
func WithOperationConfig(operation string, cfg RetryConfig) Option {
	return func(o *options) {
		if o.policies == nil {
			o.policies = make(map[string]RetryConfig)
		}
		o.policies[operation] = cfg
	}
}

// withRandom replaces the jitter source in tests.
func withRandom(f func() float64) Option {
	return func(o *options) { o.random = f }
}

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
	genAI          bool           // the GenAI conventions' latest mode
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
	// Source says where Delay came from, as the retry.backoff.source
	// attribute does: "computed" (the backoff), "retry_after" (the
	// server's hint) or "budget" (the budget's pacing).
	Source string
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

// WithGenAIConventions records each attempt that reaches a provider as the
// GenAI semantic conventions' latest (Development) form says, as
// OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental does for every
// RetryRunnable: a CLIENT span gen_ai.client.inference, named
// "{gen_ai.operation.name} {gen_ai.request.model}", under the attempt span,
// started where the provider adapter sends the request (llmhttp.Inference:
// the providers in this repository do), with http.request.resend_count on
// resends, error.type on failures and gen_ai.response.finish_reasons
// ["error"] for a stream that broke; and the metrics
// gen_ai.client.inference.duration, .time_to_first_chunk,
// .time_per_output_chunk, the .usage.input_tokens and .usage.output_tokens
// counters (every inference, 0 when no usage came) and the
// .operation.input_tokens and .operation.output_tokens histograms
// (inferences that succeeded). The call span then carries no gen_ai.*
// attribute of an inference (an MCP tool's execute_tool stays), so that a
// backend counts each inference once; an attempt
// refused locally (a budget, limiter or breaker) emits no gen_ai.* at all.
// steadfast's own spans and metrics are unchanged. Put it on the retry
// layer nearest the provider: an inner layer without it hides the
// provider's requests from an outer one that has it.
func WithGenAIConventions() Option {
	return func(o *options) { o.genAI = true }
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

package retry

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	mnoop "go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/genai"
	"github.com/steadfast-go/steadfast/internal/version"
)

// ScopeName is the OpenTelemetry instrumentation scope of the tracer and
// meter: the retry package's import path.
const ScopeName = "github.com/steadfast-go/steadfast/retry"

// Attribute keys of spans and metrics.
const (
	attrOperation  = attribute.Key("retry.operation")
	attrMethod     = attribute.Key("retry.method")
	attrMaxRetries = attribute.Key("retry.max_retries")
	attrAttempts   = attribute.Key("retry.attempts")
	attrOutcome    = attribute.Key("retry.outcome")
	// attrReason says which rule of the budget refused: the throttle of
	// first attempts, or the retries' budget.
	attrReason    = attribute.Key("reason")
	attrAttempt   = attribute.Key("retry.attempt")
	attrRetryable = attribute.Key("retry.retryable")
	// attrClass is a failed attempt's class of failure (ClassOf).
	attrClass         = attribute.Key("retry.class")
	attrBackoff       = attribute.Key("retry.backoff")
	attrBackoffSource = attribute.Key("retry.backoff.source")
	attrBatchItems    = attribute.Key("retry.batch.items")
	attrStreamChunks  = attribute.Key("retry.stream.chunks")
	attrStreamResumed = attribute.Key("retry.stream.resumed")
	attrRestarted     = attribute.Key("retry.restarted")
	attrNested        = attribute.Key("retry.nested")
	// attrRepaired marks an attempt made with the input Repair returned.
	attrRepaired = attribute.Key("retry.repaired")
	// The call's tokens: input and output over its attempts, and those of
	// attempts whose output never reached the caller.
	attrTokensInput     = attribute.Key("retry.tokens.input")
	attrTokensOutput    = attribute.Key("retry.tokens.output")
	attrTokensDiscarded = attribute.Key("retry.tokens.discarded")
	// attrTokenFate says of retry.tokens whether they were delivered or
	// discarded.
	attrTokenFate = attribute.Key("retry.token.fate")
)

// attrErrorType is semconv's error.type.
const attrErrorType = semconv.ErrorTypeKey

// Span and event names; the call spans' are callspan.Method.spanName.
const (
	spanAttempt  = "retry.attempt"
	eventBackoff = "retry.backoff"
	eventRepair  = "retry.repair"
	// eventOutputRepair: an answer CheckOutput rejected was fixed in place
	// (RepairOutput) or asked again (NextInput).
	eventOutputRepair = "retry.output_repair"
)

// The values of attrReason.
const (
	reasonThrottled   = "throttled"
	reasonRetryBudget = "retry_budget"
)

// telemetry holds the tracer and instruments of one RetryRunnable. A nil
// tracer means tracing is off (a noop provider was given); a nil counter
// means metrics are off.
type telemetry struct {
	tracer        trace.Tracer
	attempts      metric.Int64Counter
	calls         metric.Int64Counter
	backoff       metric.Float64Histogram
	budgetRefused metric.Int64Counter
	tokens        metric.Int64Counter
	durations     durations
	// genAI records inferences in the GenAI conventions' latest form; nil
	// unless that mode is on and a provider records.
	genAI     *genai.Instruments
	attrs     sync.Map // opKey → *opAttrs, at most maxCachedOps entries
	cachedOps atomic.Int64
	// recent holds, per callspan.Method, the opAttrs used last: most RetryRunnables
	// serve one operation, and comparing a key costs less than hashing it.
	recent [callspan.Methods]atomic.Pointer[opAttrs]
}

// providers resolves the options' providers (the global ones when unset)
// and returns a nil tracer or meter for a no-op one, so that a call with
// telemetry off pays for none of it.
func providers(o *options) (trace.Tracer, metric.Meter) {
	var tracer trace.Tracer
	tp := o.tracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	switch tp.(type) {
	case tnoop.TracerProvider, *tnoop.TracerProvider:
	default:
		tracer = version.Tracer(ScopeName, tp)
	}
	mp := o.meterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	switch mp.(type) {
	case mnoop.MeterProvider, *mnoop.MeterProvider:
		return tracer, nil
	}
	return tracer, version.Meter(ScopeName, mp)
}

func newTelemetry(o *options) (*telemetry, error) {
	tracer, m := providers(o)
	t := &telemetry{tracer: tracer}
	var err error
	if (o.genAI || genai.FromEnv()) && (tracer != nil || m != nil) {
		if t.genAI, err = genai.New(tracer, m); err != nil {
			return nil, err
		}
	}
	if m == nil {
		return t, nil
	}
	if t.attempts, err = m.Int64Counter("retry.attempts",
		metric.WithDescription("Attempts made, including first attempts."),
		metric.WithUnit("{attempt}")); err != nil {
		return nil, fmt.Errorf("retry: metric retry.attempts: %w", err)
	}
	if t.calls, err = m.Int64Counter("retry.calls",
		metric.WithDescription("Calls ended, by outcome."),
		metric.WithUnit("{call}")); err != nil {
		return nil, fmt.Errorf("retry: metric retry.calls: %w", err)
	}
	if t.backoff, err = m.Float64Histogram("retry.backoff.duration",
		metric.WithDescription("Backoff delays before retries."),
		metric.WithUnit("s")); err != nil {
		return nil, fmt.Errorf("retry: metric retry.backoff.duration: %w", err)
	}
	if t.budgetRefused, err = m.Int64Counter("retry.budget.refused",
		metric.WithDescription("Attempts the budget refused before they were sent, by reason: first attempts throttled, retries over the retry budget."),
		metric.WithUnit("{attempt}")); err != nil {
		return nil, fmt.Errorf("retry: metric retry.budget.refused: %w", err)
	}
	if th, ok := o.budget.(throttler); ok {
		if _, err = m.Float64ObservableGauge("retry.budget.throttle",
			metric.WithDescription("The probability with which the budget refuses a call's first attempt now."),
			metric.WithUnit("1"),
			metric.WithFloat64Callback(func(_ context.Context, obs metric.Float64Observer) error {
				obs.Observe(th.Throttle())
				return nil
			})); err != nil {
			return nil, fmt.Errorf("retry: metric retry.budget.throttle: %w", err)
		}
	}
	if t.tokens, err = m.Int64Counter("retry.tokens",
		metric.WithDescription("Tokens the calls' attempts were billed, by whether their output reached the caller."),
		metric.WithUnit("{token}")); err != nil {
		return nil, fmt.Errorf("retry: metric retry.tokens: %w", err)
	}
	if t.durations, err = newDurations(m); err != nil {
		return nil, err
	}
	return t, nil
}

// throttler is a budget that says with what probability it refuses first
// attempts now (RecommendedBudget's does), reported as a gauge.
type throttler interface{ Throttle() float64 }

// maxCachedOps bounds the prebuilt attributes kept per RetryRunnable (and
// per Middleware): one entry, about 3 KB, for each distinct operation,
// method and MaxRetries. Operation names may come from data (a tool's or a
// model's name), so past the bound a call builds its attributes afresh,
// costing a few allocations, instead of growing the cache without end.
const maxCachedOps = 1024

type opKey struct {
	operation  string
	method     callspan.Method
	maxRetries int
}

// opAttrs are the prebuilt span attributes (set on the call span when it
// ends, in one call) and measurement options of one operation, method and
// policy, so the success path neither builds attributes nor allocates for
// them.
type opAttrs struct {
	key        opKey
	call       []attribute.KeyValue    // the call span's policy attributes
	successEnd [8][]attribute.KeyValue // call span attributes of a success on attempt i+1
	base       []attribute.KeyValue
	attemptOK  []metric.AddOption
	callOK     []metric.AddOption
	recordOK   []metric.RecordOption
	// recordCallOK are a successful call's duration histograms' options.
	recordCallOK []metric.RecordOption
}

func (t *telemetry) opAttrs(operation string, m callspan.Method, maxRetries int) *opAttrs {
	key := opKey{operation, m, maxRetries}
	recent := &t.recent[m]
	if a := recent.Load(); a != nil && a.key == key {
		return a
	}
	if a, ok := t.attrs.Load(key); ok {
		recent.Store(a.(*opAttrs))
		return a.(*opAttrs)
	}
	a := newOpAttrs(key)
	if t.cachedOps.Load() >= maxCachedOps {
		return a
	}
	actual, loaded := t.attrs.LoadOrStore(key, a)
	if !loaded {
		t.cachedOps.Add(1)
	}
	recent.Store(actual.(*opAttrs))
	return actual.(*opAttrs)
}

// cachedOpAttrs reports how many operations have prebuilt attributes.
func (t *telemetry) cachedOpAttrs() int { return int(t.cachedOps.Load()) }

func newOpAttrs(key opKey) *opAttrs {
	operation, method, maxRetries := key.operation, key.method, key.maxRetries
	base := []attribute.KeyValue{attrMethod.String(method.String())}
	call := []attribute.KeyValue{attrMaxRetries.Int(maxRetries)}
	if operation != "" {
		base = append(base, attrOperation.String(operation))
		call = append(call, attrOperation.String(operation))
	}
	baseSet := metric.WithAttributeSet(attribute.NewSet(base...))
	a := &opAttrs{
		key:       key,
		call:      call,
		base:      base,
		attemptOK: []metric.AddOption{baseSet},
		recordOK:  []metric.RecordOption{baseSet},
	}
	callOK := metric.WithAttributeSet(attribute.NewSet(append(base[:len(base):len(base)], attrOutcome.String(string(outcomeSuccess)))...))
	a.callOK, a.recordCallOK = []metric.AddOption{callOK}, []metric.RecordOption{callOK}
	for i := range a.successEnd {
		a.successEnd[i] = append(call[:len(call):len(call)], attrAttempts.Int(i+1), attrOutcome.String(string(outcomeSuccess)))
	}
	return a
}

// callEnd returns the call span's attributes at its end: the policy's, the
// attempts made and the outcome, then extra.
func (a *opAttrs) callEnd(attempts int, outcome Outcome, extra ...attribute.KeyValue) []attribute.KeyValue {
	if outcome == outcomeSuccess && len(extra) == 0 && attempts >= 1 && attempts <= len(a.successEnd) {
		return a.successEnd[attempts-1]
	}
	kv := make([]attribute.KeyValue, 0, len(a.call)+2+len(extra))
	kv = append(kv, a.call...)
	kv = append(kv, attrAttempts.Int(attempts), attrOutcome.String(string(outcome)))
	return append(kv, extra...)
}

// attemptAttrs holds the retry.attempt attribute of the first attempt
// spans, built once.
var attemptAttrs = func() (kv [8][]attribute.KeyValue) {
	for i := range kv {
		kv[i] = []attribute.KeyValue{attrAttempt.Int(i + 1)}
	}
	return kv
}()

func attemptAttr(n int) []attribute.KeyValue {
	if n >= 1 && n <= len(attemptAttrs) {
		return attemptAttrs[n-1]
	}
	return []attribute.KeyValue{attrAttempt.Int(n)}
}

func (a *opAttrs) with(kv ...attribute.KeyValue) metric.MeasurementOption {
	all := make([]attribute.KeyValue, 0, len(a.base)+len(kv))
	all = append(append(all, a.base...), kv...)
	return metric.WithAttributeSet(attribute.NewSet(all...))
}

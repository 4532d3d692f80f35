package hedge

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/errproto"
)

// ScopeName is the OpenTelemetry instrumentation scope of the tracer and
// meter.
const ScopeName = "github.com/steadfast-go/steadfast/hedge"

// Attribute keys of the spans and the counter.
const (
	// attrIndex is an attempt's index, 0 for the first.
	attrIndex = attribute.Key("hedge.index")
	// attrHedged marks every attempt but the first: a hedge.
	attrHedged = attribute.Key("hedge.hedged")
	// attrWon reports whether the attempt's answer was taken.
	attrWon = attribute.Key("hedge.won")
	// attrAttempts is the number of attempts a call made.
	attrAttempts = attribute.Key("hedge.attempts")
	// attrMethod is invoke or stream.
	attrMethod = attribute.Key("hedge.method")
)

// telemetry is a Runnable's tracer and its counter of attempts.
type telemetry struct{ callspan.Telemetry }

func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) (telemetry, error) {
	t, err := callspan.NewTelemetry("hedge", ScopeName, tp, mp, callspan.Counter{
		Name: "attempts", Description: "Attempts made by hedged calls, by whether their answer was taken.", Unit: "{attempt}"})
	return telemetry{t}, err
}

// call is one hedged call's span.
type call struct {
	callspan.Span
	t      *telemetry
	method callspan.Method
}

func (t *telemetry) begin(ctx context.Context, m callspan.Method) (context.Context, *call) {
	ctx, span := t.Begin(ctx, m)
	return ctx, &call{Span: span, t: t, method: m}
}

// attemptSpan starts attempt k's span.
func (c *call) attemptSpan(ctx context.Context, k int) (context.Context, trace.Span) {
	return c.t.Tracer.Start(ctx, "hedge.attempt", trace.WithAttributes(attrIndex.Int(k), attrHedged.Bool(k > 0)))
}

// endAttempt ends an attempt's span and counts it. It runs on the
// attempt's goroutine.
func (c *call) endAttempt(ctx context.Context, span trace.Span, a answer) {
	c.t.Counter.Add(ctx, 1, metric.WithAttributes(
		attrMethod.String(c.method.String()), attrWon.Bool(a.won), attrHedged.Bool(a.k > 0)))
	span.SetAttributes(attrWon.Bool(a.won))
	if a.err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String(errproto.Type(a.err)))
		span.SetStatus(codes.Error, a.err.Error())
	}
	span.End()
}

// fail ends a call that no attempt answered, after attempts attempts, and
// returns its error.
func (c *call) fail(err *Error, attempts int) *Error {
	c.Fail(err, attrAttempts.Int(attempts), semconv.ErrorTypeKey.String(errproto.Type(err)))
	return err
}

// refused records a hedge the budget refused.
func (c *call) refused() {
	c.AddEvent("hedge.refused")
}

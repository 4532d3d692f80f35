package fallback

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/internal/version"
)

// ScopeName is the OpenTelemetry instrumentation scope of the tracer and
// meter.
const ScopeName = "github.com/steadfast-go/steadfast/fallback"

// Attribute keys of the call span, its events and the counter.
const (
	// attrCandidate is the index of the candidate that answered.
	attrCandidate = attribute.Key("fallback.candidate")
	// attrCandidateName is its Name(), when it has one.
	attrCandidateName = attribute.Key("fallback.candidate.name")
	// attrSwitches is the number of moves to a next candidate in the call.
	attrSwitches = attribute.Key("fallback.switches")
	// attrFrom is the index of the candidate a switch moved away from.
	attrFrom = attribute.Key("fallback.from")
	// attrMethod is invoke, batch or stream.
	attrMethod = attribute.Key("fallback.method")
)

type method uint8

const (
	methodInvoke method = iota
	methodBatch
	methodStream
)

func (m method) String() string { return [...]string{"invoke", "batch", "stream"}[m] }

// telemetry is a Runnable's tracer and counter.
type telemetry struct {
	tracer   trace.Tracer
	switches metric.Int64Counter
}

func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) (telemetry, error) {
	t := telemetry{tracer: version.Tracer(ScopeName, tp)}
	var err error
	t.switches, err = version.Meter(ScopeName, mp).Int64Counter("fallback.switches",
		metric.WithDescription("Moves from a failed candidate to the next."), metric.WithUnit("{switch}"))
	if err != nil {
		return t, fmt.Errorf("fallback: metric fallback.switches: %w", err)
	}
	return t, nil
}

// call is one call's span and switches.
type call struct {
	callspan.Span
	t        *telemetry
	method   method
	switches int
}

// begin starts a call's span and returns the call and the span's context.
func (t *telemetry) begin(ctx context.Context, m method) (context.Context, *call) {
	ctx, span := t.tracer.Start(ctx, "fallback."+m.String())
	return ctx, &call{Span: callspan.Span{Span: span}, t: t, method: m}
}

// switched records a move away from candidate i.
func (c *call) switched(ctx context.Context, i int, names []string, err error) {
	c.switches++
	c.t.switches.Add(ctx, 1, metric.WithAttributes(attrMethod.String(c.method.String()), attrFrom.Int(i)))
	if c.IsRecording() {
		c.AddEvent("fallback.switch", trace.WithAttributes(
			attrFrom.Int(i), attrCandidateName.String(names[i]), semconv.ErrorTypeKey.String(errorType(err))))
	}
}

// succeed ends a call that candidate i answered.
func (c *call) succeed(i int, name string) {
	c.Succeed(attrCandidate.Int(i), attrCandidateName.String(name), attrSwitches.Int(c.switches))
}

// fail ends a call that no candidate served.
func (c *call) fail(err error) {
	c.Fail(err, attrSwitches.Int(c.switches), semconv.ErrorTypeKey.String(errorType(err)))
}

// errorType is err's error.type: for an *Error, its last failure's.
func errorType(err error) string {
	if fe, ok := errors.AsType[*Error](err); ok {
		return fe.ErrorType()
	}
	return errproto.Type(err)
}

package fallback

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/errproto"
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

// telemetry is a Runnable's tracer and its counter of switches.
type telemetry struct{ callspan.Telemetry }

func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) (telemetry, error) {
	t, err := callspan.NewTelemetry("fallback", ScopeName, tp, mp, callspan.Counter{
		Name: "switches", Description: "Moves from a failed candidate to the next.", Unit: "{switch}"})
	return telemetry{t}, err
}

// call is one call's span and switches.
type call struct {
	callspan.Span
	t        *telemetry
	method   callspan.Method
	switches int
}

// begin starts a call's span and returns the call and the span's context.
func (t *telemetry) begin(ctx context.Context, m callspan.Method) (context.Context, *call) {
	ctx, span := t.Begin(ctx, m)
	return ctx, &call{Span: span, t: t, method: m}
}

// switched records a move away from candidate i.
func (c *call) switched(ctx context.Context, i int, names []string, err error) {
	c.moved(ctx, "fallback.switch", i, names, err)
}

// restarted records a committed stream of candidate i starting again on
// the next candidate: a move, whose event is fallback.restart.
func (c *call) restarted(ctx context.Context, i int, names []string, err error) {
	c.moved(ctx, "fallback.restart", i, names, err)
}

func (c *call) moved(ctx context.Context, event string, i int, names []string, err error) {
	c.switches++
	c.t.Counter.Add(ctx, 1, metric.WithAttributes(attrMethod.String(c.method.String()), attrFrom.Int(i)))
	if c.IsRecording() {
		c.AddEvent(event, trace.WithAttributes(
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

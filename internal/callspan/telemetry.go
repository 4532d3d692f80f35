package callspan

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/internal/version"
)

// Telemetry is a decorator's tracer and its one counter.
type Telemetry struct {
	Tracer  trace.Tracer
	Counter metric.Int64Counter
	pkg     string // the decorator's package: its spans' and metric's prefix
}

// Counter names the counter a decorator makes: "<pkg>.<Name>".
type Counter struct {
	Name, Description, Unit string
}

// NewTelemetry returns the tracer and counter of package pkg, whose
// instrumentation scope is scope.
func NewTelemetry(pkg, scope string, tp trace.TracerProvider, mp metric.MeterProvider, c Counter) (Telemetry, error) {
	t := Telemetry{Tracer: version.Tracer(scope, tp), pkg: pkg}
	name := pkg + "." + c.Name
	var err error
	t.Counter, err = version.Meter(scope, mp).Int64Counter(name,
		metric.WithDescription(c.Description), metric.WithUnit(c.Unit))
	if err != nil {
		return t, fmt.Errorf("%s: metric %s: %w", pkg, name, err)
	}
	return t, nil
}

// Begin starts the span of a call made through m, "<pkg>.<m>".
func (t *Telemetry) Begin(ctx context.Context, m Method) (context.Context, Span) {
	ctx, span := t.Tracer.Start(ctx, t.pkg+"."+m.String())
	return ctx, Span{Span: span}
}

package version

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Tracer returns tp's tracer for the instrumentation scope name, at
// steadfast's version; a nil tp means the global provider.
func Tracer(name string, tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(name, trace.WithInstrumentationVersion(Version))
}

// Meter returns mp's meter for the instrumentation scope name, at
// steadfast's version; a nil mp means the global provider.
func Meter(name string, mp metric.MeterProvider) metric.Meter {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	return mp.Meter(name, metric.WithInstrumentationVersion(Version))
}

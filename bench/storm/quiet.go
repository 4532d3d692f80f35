package storm

import (
	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	sfretry "github.com/steadfast-go/steadfast/retry"
)

// quiet turns steadfast's telemetry off, as the peers have none.
func quiet() []sfretry.Option {
	return []sfretry.Option{
		sfretry.WithTracerProvider(tnoop.NewTracerProvider()),
		sfretry.WithMeterProvider(noop.NewMeterProvider()),
	}
}

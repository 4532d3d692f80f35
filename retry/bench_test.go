package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

var benchSink any

// telemetrySetups are the telemetry configurations every benchmark runs
// under: providers switched off, and the untouched global providers (no
// SDK installed).
var telemetrySetups = []struct {
	name string
	opts []retry.Option
}{
	{"telemetry=off", []retry.Option{
		retry.WithTracerProvider(tnoop.NewTracerProvider()),
		retry.WithMeterProvider(noop.NewMeterProvider()),
	}},
	{"telemetry=globals", nil},
}

func benchConfig() retry.RetryConfig {
	return retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond}
}

var errBench = errors.New("bench: transient")

// failingTwice fails the first two attempts of every call.
func failingTwice(ctx context.Context, _ any, _ ...core.Option) (any, error) {
	if info, _ := retry.AttemptFromContext(ctx); info.Attempt <= 2 {
		return nil, errBench
	}
	return "ok", nil
}

func succeeding(context.Context, any, ...core.Option) (any, error) { return "ok", nil }

func BenchmarkInvoke(b *testing.B) {
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		var inner core.Runnable = core.RunnableFunc(succeeding)
		for b.Loop() {
			benchSink, _ = inner.Invoke(ctx, "q")
		}
	})
	for _, setup := range telemetrySetups {
		for _, path := range []struct {
			name  string
			inner core.RunnableFunc
		}{{"success", succeeding}, {"two-failures", failingTwice}} {
			b.Run(path.name+"/"+setup.name, func(b *testing.B) {
				r, err := retry.New(path.inner, benchConfig(), setup.opts...)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if benchSink, err = r.Invoke(ctx, "q"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

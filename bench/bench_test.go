package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	sfretry "github.com/steadfast-go/steadfast/retry"
)

// benchPolicy has 1ns delays, so the two-failures path measures the
// libraries' work, not their sleeps. No jitter: with it steadfast's delay
// would round down to 0 and skip its timer, while the peers' would not.
var benchPolicy = Policy{Attempts: 4, Initial: time.Nanosecond, Factor: 2, Max: time.Nanosecond}

// contenders are every library on the same policy; steadfast four times:
// telemetry off (noop providers), the untouched global providers (no SDK
// installed), a recording SDK for traces alone (the spans of DESIGN §5's
// tracing target, beside BenchmarkSpanFloor), and a recording SDK for
// traces and metrics. The peers emit no telemetry.
func contenders() []Retrier {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	sdk := []sfretry.Option{
		sfretry.WithTracerProvider(tp),
		sfretry.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))),
	}
	return []Retrier{
		Steadfast("steadfast/telemetry=off", benchPolicy,
			sfretry.WithTracerProvider(tnoop.NewTracerProvider()), sfretry.WithMeterProvider(noop.NewMeterProvider())),
		Steadfast("steadfast/telemetry=globals", benchPolicy),
		Steadfast("steadfast/telemetry=sdk-traces", benchPolicy,
			sfretry.WithTracerProvider(tp), sfretry.WithMeterProvider(noop.NewMeterProvider())),
		Steadfast("steadfast/telemetry=sdk", benchPolicy, sdk...),
		Cenkalti(benchPolicy),
		Avast(benchPolicy),
		Sethvargo(benchPolicy),
		Failsafe(benchPolicy, 0),
	}
}

var errBench = errors.New("bench: overloaded")

func succeed(context.Context) error { return nil }

// directOp is called through a variable, so the baseline is a real call,
// as the libraries make, rather than an inlined nothing.
var directOp Op = succeed

// BenchmarkOneSpan is the unit of the tracing targets (README.md): one span
// started and ended, with the untouched global provider (no SDK) and with a
// recording SDK.
func BenchmarkOneSpan(b *testing.B) {
	ctx := context.Background()
	for _, tp := range []struct {
		name   string
		tracer trace.Tracer
	}{
		{"globals", otel.GetTracerProvider().Tracer("bench")},
		{"sdk", sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample())).Tracer("bench")},
	} {
		b.Run(tp.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, span := tp.tracer.Start(ctx, "span")
				span.End()
			}
		})
	}
}

func BenchmarkSuccess(b *testing.B) {
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = directOp(ctx)
		}
	})
	for _, r := range append([]Retrier{Floor()}, contenders()...) {
		b.Run(r.Name(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := r.Do(ctx, succeed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkTwoFailures(b *testing.B) {
	ctx := context.Background()
	for _, r := range contenders() {
		b.Run(r.Name(), func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			// Fails twice, then succeeds: the state is reset every third call.
			op := Op(func(context.Context) error {
				n++
				if n%3 != 0 {
					return errBench
				}
				return nil
			})
			for b.Loop() {
				if err := r.Do(ctx, op); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSpanFloor is what any retry layer with call and attempt spans
// pays the SDK before doing anything: two nested spans, bare and with the
// attributes the retry package's telemetry requires; and, the floor of
// traces and metrics, those two spans and the two counter increments of a
// success (retry.attempts and retry.calls, with prebuilt attribute sets).
func BenchmarkSpanFloor(b *testing.B) {
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample())).Tracer("bench")
	meter := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())).Meter("bench")
	attempts, _ := meter.Int64Counter("retry.attempts")
	calls, _ := meter.Int64Counter("retry.calls")
	base := []attribute.KeyValue{attribute.String("retry.method", "invoke")}
	attemptSet := metric.WithAttributeSet(attribute.NewSet(base...))
	callSet := metric.WithAttributeSet(attribute.NewSet(append(base, attribute.String("retry.outcome", "success"))...))
	ctx := context.Background()
	callKV := []attribute.KeyValue{
		attribute.Int("retry.max_retries", 3), attribute.Int("retry.attempts", 1), attribute.String("retry.outcome", "success"),
	}
	attemptKV := []attribute.KeyValue{attribute.Int("retry.attempt", 1)}
	for _, floor := range []struct {
		name               string
		attrs, countersToo bool
	}{
		{"two-spans", false, false},
		{"two-spans-with-attributes", true, false},
		{"two-spans-with-attributes-and-two-counters", true, true},
	} {
		b.Run(floor.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				cctx, call := tracer.Start(ctx, "call")
				actx, attempt := tracer.Start(cctx, "attempt")
				if floor.countersToo {
					attempts.Add(actx, 1, attemptSet)
				}
				if floor.attrs {
					attempt.SetAttributes(attemptKV...)
				}
				attempt.End()
				if floor.countersToo {
					calls.Add(cctx, 1, callSet)
				}
				if floor.attrs {
					call.SetAttributes(callKV...)
				}
				call.End()
			}
		})
	}
}

package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
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
	{"telemetry=sdk-traces", []retry.Option{
		retry.WithTracerProvider(recordingTracerProvider),
		retry.WithMeterProvider(noop.NewMeterProvider()),
	}},
	{"telemetry=sdk", []retry.Option{
		retry.WithTracerProvider(recordingTracerProvider),
		retry.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))),
	}},
}

// recordingTracerProvider samples and records every span, and exports none,
// so a benchmark measures the instrumentation, not an exporter.
var recordingTracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))

// BenchmarkOneSpan is the unit of the tracing targets (bench/README.md): one span
// started and ended with the recording SDK.
func BenchmarkOneSpan(b *testing.B) {
	tracer := recordingTracerProvider.Tracer("bench")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, span := tracer.Start(ctx, "span")
		span.End()
	}
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

// chunkSource streams n copies of one chunk, so that the only allocations a
// benchmark sees are the forwarding's own.
type chunkSource struct{ n int }

func (s chunkSource) Invoke(context.Context, any, ...core.Option) (any, error) { return nil, nil }
func (s chunkSource) Batch(context.Context, []any, ...core.Option) ([]any, error) {
	return nil, nil
}
func (s chunkSource) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	ch := make(chan any)
	go func() {
		defer close(ch)
		var chunk any = "token"
		for range s.n {
			select {
			case ch <- chunk:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}

// BenchmarkStream forwards one stream of b.N chunks: ns/op and allocs/op
// are per chunk, the stream's set-up amortised away.
func BenchmarkStream(b *testing.B) {
	ctx := context.Background()
	consume := func(b *testing.B, r core.Runnable) {
		b.ReportAllocs()
		b.ResetTimer()
		ch, err := r.Stream(ctx, "q")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for v := range ch {
			benchSink = v
			n++
		}
		if n != b.N {
			b.Fatalf("got %d chunks, want %d", n, b.N)
		}
	}
	b.Run("direct", func(b *testing.B) { consume(b, chunkSource{n: b.N}) })
	for _, setup := range telemetrySetups {
		b.Run(setup.name, func(b *testing.B) {
			r, err := retry.New(chunkSource{n: b.N}, benchConfig(), setup.opts...)
			if err != nil {
				b.Fatal(err)
			}
			consume(b, r)
		})
	}
	// ChunkTimeout resets one timer per chunk, and allocates nothing.
	b.Run("telemetry=off/chunk_timeout", func(b *testing.B) {
		cfg := benchConfig()
		cfg.ChunkTimeout = time.Minute
		r, err := retry.New(chunkSource{n: b.N}, cfg, telemetrySetups[0].opts...)
		if err != nil {
			b.Fatal(err)
		}
		consume(b, r)
	})
}

// BenchmarkBudget is the success path with each budget against none: the
// recommended budget may cost at most 10 ns more (bench/README.md).
func BenchmarkBudget(b *testing.B) {
	ctx := context.Background()
	off := []retry.Option{retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider())}
	for _, c := range []struct {
		name   string
		budget retry.Budget
	}{{"none", nil}, {"token", retry.NewTokenBudget(300, 2)}, {"recommended", retry.RecommendedBudget()}} {
		b.Run(c.name, func(b *testing.B) {
			opts := off
			if c.budget != nil {
				opts = append(opts[:len(opts):len(opts)], retry.WithBudget(c.budget))
			}
			r, err := retry.New(core.RunnableFunc(succeeding), benchConfig(), opts...)
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

// BenchmarkAdapterInvoke is a provider adapter's successful call (it marks
// its inference and records its response) through a retry layer: off, with
// the recording SDK, and with the SDK in the GenAI conventions' mode,
// whose third span and seven measurements are its cost.
func BenchmarkAdapterInvoke(b *testing.B) {
	ctx := context.Background()
	sdk := telemetrySetups[3].opts
	for _, setup := range []struct {
		name string
		opts []retry.Option
	}{
		{"telemetry=off", telemetrySetups[0].opts},
		{"telemetry=sdk", sdk},
		{"telemetry=sdk/genai", append(sdk[:len(sdk):len(sdk)], retry.WithGenAIConventions())},
	} {
		b.Run(setup.name, func(b *testing.B) {
			r, err := retry.New(core.RunnableFunc(inferring), benchConfig(), setup.opts...)
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

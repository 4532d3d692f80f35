package pool_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
)

var sink any

// BenchmarkInvoke is the pool's success path over three deployments,
// beside a direct call of one.
func BenchmarkInvoke(b *testing.B) {
	ok := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink, _ = ok.Invoke(ctx, "q")
		}
	})
	for _, affinity := range []bool{false, true} {
		opts := []pool.Option{pool.WithMeterProvider(noop.NewMeterProvider())}
		name := "pool"
		if affinity {
			name = "pool-affinity"
			opts = append(opts, pool.WithAffinity(func(context.Context, any) string { return "session-42" }))
		}
		p, err := pool.New([]pool.Deployment{{Name: "a", Runnable: ok}, {Name: "b", Runnable: ok}, {Name: "c", Runnable: ok}}, opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink, _ = p.Invoke(ctx, "q")
			}
		})
	}
}

// BenchmarkRetryPool is the success path a user runs: a retry layer
// around the pool, telemetry off.
func BenchmarkRetryPool(b *testing.B) {
	ok := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	p, err := pool.New([]pool.Deployment{{Name: "a", Runnable: ok}, {Name: "b", Runnable: ok}, {Name: "c", Runnable: ok}},
		pool.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		b.Fatal(err)
	}
	r, err := retry.New(p, retry.DefaultRetryConfig(),
		retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sink, _ = r.Invoke(ctx, "q")
	}
}

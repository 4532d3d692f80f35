package ratelimit_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/ratelimit"
)

// The success path: a token is free, the call goes at once.
func BenchmarkInvoke(b *testing.B) {
	inner := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return 1, nil })
	for _, bc := range []struct {
		name string
		opts []ratelimit.Option
	}{
		{"requests", nil},
		{"tokens", []ratelimit.Option{
			ratelimit.WithCost(func(any) int { return 10 }),
			ratelimit.WithUsage(func(out any) int { return out.(int) }),
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r, err := ratelimit.New(inner, ratelimit.InProcess(rate.NewLimiter(rate.Limit(1e12), 1e9)),
				append(bc.opts, ratelimit.WithMeterProvider(noop.NewMeterProvider()))...)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Invoke(ctx, "q"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

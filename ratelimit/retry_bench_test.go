package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// roomy is a provider whose headers always leave room.
type roomy struct{ core.RunnableFunc }

func (roomy) RateLimits() (llmhttp.RateLimits, bool) {
	now := time.Now()
	return llmhttp.RateLimits{At: now, Requests: llmhttp.Limit{Known: true, Limit: 1 << 40, Remaining: 1 << 40, Reset: now.Add(time.Hour)}}, true
}

// The success path of retry(ratelimit(provider)): a token is free and, when
// the provider's headers are read, they leave room.
func BenchmarkRetryRatelimit(b *testing.B) {
	ok := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return 1, nil })
	for name, inner := range map[string]core.Runnable{"no-headers": ok, "headers": roomy{ok}} {
		b.Run(name, func(b *testing.B) {
			limited, err := ratelimit.New(inner, ratelimit.InProcess(rate.NewLimiter(rate.Limit(1e12), 1e9)),
				ratelimit.WithMeterProvider(noop.NewMeterProvider()))
			if err != nil {
				b.Fatal(err)
			}
			r, err := retry.New(limited, retry.DefaultRetryConfig(),
				retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
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

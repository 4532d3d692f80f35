package ratelimit_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/race"
	"github.com/steadfast-go/steadfast/ratelimit"
)

// A Concurrency's Invoke, on the success path with room free, allocates
// nothing over the inner call: the permit is taken and given back under
// one lock each, and no closure escapes.
func TestConcurrencyInvokeAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	inner := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	r, err := ratelimit.NewConcurrency(inner, ratelimit.ConcurrencyConfig{MeterProvider: noop.NewMeterProvider()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, input := context.Background(), any("q")
	direct := testing.AllocsPerRun(1000, func() { _, _ = inner.Invoke(ctx, input) })
	got := testing.AllocsPerRun(1000, func() { _, _ = r.Invoke(ctx, input) })
	if got > direct {
		t.Errorf("Concurrency.Invoke: %v allocations a call, the inner call alone %v: want none over it", got, direct)
	}
}

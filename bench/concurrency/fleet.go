package concurrency

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/steadfast-go/steadfast/fleet"
	"github.com/steadfast-go/steadfast/ratelimit"
)

// RunFleet plays the phases in real time with the Clients clients spread
// over replicas processes' worth of fleet.Concurrency, each its own
// limiter, sharing one limit under key on client's Redis (the fleet
// module's). The samples' limit is the sum of the replicas' shares.
func RunFleet(client redis.UniversalClient, key string, replicas int, phases []Phase, seed uint64) (Result, error) {
	p := NewProvider(DefaultModel, phases[0].Capacity, seed)
	cs := make([]*fleet.Concurrency, 0, replicas)
	readers := make([]*sdkmetric.ManualReader, 0, replicas)
	defer func() {
		for _, c := range cs {
			c.Close()
		}
	}()
	for range replicas {
		reader := sdkmetric.NewManualReader()
		c, err := fleet.NewConcurrency(client, key, p, ratelimit.ConcurrencyConfig{Initial: 8, Max: 1000,
			MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		if err != nil {
			return Result{}, err
		}
		cs, readers = append(cs, c), append(readers, reader)
	}
	limit := func() float64 {
		var sum float64
		for _, r := range readers {
			sum += gauge(r, "ratelimit.concurrency.limit")
		}
		return sum
	}
	of := func(n int) Contender {
		c := cs[n%replicas]
		return Contender{Stream: func(ctx context.Context) error { return drain(c.Stream(ctx, "q")) }}
	}
	res := play(p, fmt.Sprintf("steadfast, %d replicas sharing a limit on Redis", replicas), of, limit, phases)
	for _, c := range cs {
		if c.Degraded() {
			return res, errors.New("a replica fell back from Redis during the run: it does not count")
		}
	}
	return res, nil
}

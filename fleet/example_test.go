package fleet_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fleet"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// Every replica builds the same Limiter, on the same key: together they
// draw 2,000,000 tokens a minute, whichever replica the load falls on.
// (Examples in this package need a Redis server, so they are compiled but
// not run; examples/fleet runs one.)
func ExampleNewLimiter() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer client.Close()
	lim, err := fleet.NewLimiter(client, "openai-tpm", rate.Limit(2_000_000.0/60), 2_000_000,
		fleet.WithFallbackShare(1.0/8)) // one of 8 replicas, while Redis is away
	if err != nil {
		panic(err)
	}
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return 42, nil })
	r := core.Chain(llm,
		retry.Middleware(retry.DefaultRetryConfig()),
		ratelimit.Middleware(lim,
			ratelimit.WithCost(func(in any) int { return len(in.(string))/4 + 1024 }), // prompt + max_tokens
			ratelimit.WithUsage(func(out any) int { return out.(int) })))              // the tokens the provider counted
	out, err := r.Invoke(context.Background(), "Summarise this article.")
	fmt.Println(out, err)
}

// Every replica shares one retry budget per provider: an outage seen by all
// of them is held to one budget's retries.
func ExampleNewBudget() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer client.Close()
	budget, err := fleet.NewBudget(client, "openai", fleet.WithSyncInterval(100*time.Millisecond))
	if err != nil {
		panic(err)
	}
	defer budget.Close()
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	r, err := retry.New(llm, retry.DefaultRetryConfig(), retry.WithBudget(budget))
	if err != nil {
		panic(err)
	}
	out, err := r.Invoke(context.Background(), "q")
	fmt.Println(out, err)
}

// Every replica puts its model behind the same Concurrency key: the
// replicas find the provider's capacity together, each with its share of
// the calls in flight, and a 429 at any one cuts the limit once for all.
func ExampleNewConcurrency() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer client.Close()
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	c, err := fleet.NewConcurrency(client, "self-hosted-llama", llm,
		ratelimit.ConcurrencyConfig{Initial: 16, Max: 256})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	r := core.Chain(core.Runnable(c), retry.Middleware(retry.DefaultRetryConfig()))
	out, err := r.Invoke(context.Background(), "Summarise this article.")
	fmt.Println(out, err)
}

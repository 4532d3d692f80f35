package breaker_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/sony/gobreaker/v2"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

func ExampleNew() {
	down := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
		return nil, errors.New("connection refused")
	})
	b, err := breaker.New(down, gobreaker.Settings{
		Name:        "llm",
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 2 },
	}, breaker.WithOnStateChange(func(name string, from, to gobreaker.State) {
		fmt.Printf("%s: %s -> %s\n", name, from, to)
	}))
	if err != nil {
		panic(err)
	}
	for range 3 {
		_, err = b.Invoke(context.Background(), "q")
	}
	fmt.Println(err)
	// Output:
	// llm: closed -> open
	// breaker "llm": circuit breaker is open
}

// Recommended order: retry outermost, then the breaker, so every attempt
// passes it and retries stop as soon as it opens.
func ExampleMiddleware() {
	calls := 0
	down := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
		calls++
		return nil, errors.New("connection refused")
	})
	cfg := retry.RetryConfig{MaxRetries: 9}
	r := core.Chain(down,
		retry.Middleware(cfg),
		breaker.Middleware(gobreaker.Settings{ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 3 }}))
	_, err := r.Invoke(context.Background(), "q")
	var re *retry.Error
	errors.As(err, &re)
	fmt.Println(calls, re.Attempts, re.Outcome)
	// Output: 3 4 not_retryable
}

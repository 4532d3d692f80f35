package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

func ExampleNew() {
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	// At most 100 calls a second, in bursts of up to 10.
	r, err := ratelimit.New(llm, rate.NewLimiter(100, 10))
	if err != nil {
		panic(err)
	}
	out, err := r.Invoke(context.Background(), "q")
	fmt.Println(out, err)
	// Output: ok <nil>
}

func ExampleWithFailFast() {
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	r, _ := ratelimit.New(llm, rate.NewLimiter(rate.Every(time.Hour), 1), ratelimit.WithFailFast())
	_, _ = r.Invoke(context.Background(), "q") // takes the only token
	_, err := r.Invoke(context.Background(), "q")
	fmt.Println(errors.Is(err, ratelimit.ErrLimited))
	// Output: true
}

// The limiter goes inside the retry layer, so every attempt takes a token.
func ExampleMiddleware() {
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	r := core.Chain(llm,
		retry.Middleware(retry.DefaultRetryConfig()),
		ratelimit.Middleware(rate.NewLimiter(50, 5)))
	out, _ := r.Invoke(context.Background(), "q")
	fmt.Println(out)
	// Output: ok
}

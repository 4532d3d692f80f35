package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

func ExampleNew() {
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	// At most 100 calls a second, in bursts of up to 10.
	r, err := ratelimit.New(llm, ratelimit.InProcess(rate.NewLimiter(100, 10)))
	if err != nil {
		panic(err)
	}
	out, err := r.Invoke(context.Background(), "q")
	fmt.Println(out, err)
	// Output: ok <nil>
}

// WithMaxWait(0) never waits: a call fails at once when no token is free.
func ExampleWithMaxWait_failFast() {
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	r, _ := ratelimit.New(llm, ratelimit.InProcess(rate.NewLimiter(rate.Every(time.Hour), 1)), ratelimit.WithMaxWait(0))
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
		ratelimit.Middleware(ratelimit.InProcess(rate.NewLimiter(50, 5))))
	out, _ := r.Invoke(context.Background(), "q")
	fmt.Println(out)
	// Output: ok
}

// A tokens-per-minute bucket: each call is estimated at its prompt plus the
// most its answer may take, and settled on the usage the answer reports.
func ExampleWithCost() {
	type answer struct {
		text   string
		tokens int
	}
	llm := core.RunnableFunc(func(_ context.Context, in any, _ ...core.Option) (any, error) {
		return answer{text: "ok", tokens: 120}, nil // the provider's usage
	})
	tpm := rate.NewLimiter(rate.Limit(200_000.0/60), 200_000) // 200,000 tokens a minute
	r, _ := ratelimit.New(llm, ratelimit.InProcess(tpm),
		ratelimit.WithCost(func(in any) int { return len(in.(string))/4 + 1024 }), // prompt + max_tokens
		ratelimit.WithUsage(func(out any) int { return out.(answer).tokens }))
	_, _ = r.Invoke(context.Background(), "Summarise this article.")
	// 1,029 tokens were taken, 909 given back: 120 spent (and the bucket
	// refills as it goes).
	fmt.Printf("about %.0f tokens left\n", math.Round(tpm.Tokens()/100)*100)
	// Output: about 199900 tokens left
}

// Waiting for tokens leaves the rest of the deadline for the answer.
func ExampleWithMaxWait() {
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	r, _ := ratelimit.New(llm, ratelimit.InProcess(rate.NewLimiter(rate.Every(time.Minute), 1)), ratelimit.WithMaxWait(time.Second))
	_, _ = r.Invoke(context.Background(), "q") // takes the only token
	_, err := r.Invoke(context.Background(), "q")
	var le *ratelimit.LimitedError
	fmt.Println(errors.As(err, &le), le.Wait > time.Second)
	// Output: true true
}

// A Backend of your own, or the fleet module's Redis one, in place of the
// in-process bucket.
func ExampleBackend() {
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	var bucket ratelimit.Backend = ratelimit.InProcess(rate.NewLimiter(50, 5)) // or fleet.NewLimiter(...)
	r, err := ratelimit.New(llm, bucket)
	if err != nil {
		panic(err)
	}
	out, _ := r.Invoke(context.Background(), "q")
	fmt.Println(out)
	// Output: ok
}

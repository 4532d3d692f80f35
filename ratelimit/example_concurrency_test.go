package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

func ExampleNewConcurrency() {
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	// Start at 8 calls in flight; find the provider's capacity between 2 and 64.
	r, err := ratelimit.NewConcurrency(llm, ratelimit.ConcurrencyConfig{Initial: 8, Min: 2, Max: 64})
	if err != nil {
		panic(err)
	}
	out, err := r.Invoke(context.Background(), "q")
	fmt.Println(out, err)
	// Output: ok <nil>
}

// Put the limit inside the retry layer, so that every attempt takes a
// permit and the 429s it meets lower the limit.
func ExampleConcurrencyMiddleware() {
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	chain := core.Chain(llm,
		retry.Middleware(retry.DefaultRetryConfig()),
		ratelimit.ConcurrencyMiddleware(ratelimit.ConcurrencyConfig{Max: 64, MaxWait: 10 * time.Second}))
	out, err := chain.Invoke(context.Background(), "q")
	fmt.Println(out, err)
	// Output: ok <nil>
}

// A request handler marks a user's call Interactive: under saturation it
// goes before Standard and Batch work, which still never waits longer
// than MaxStarvation.
func ExampleWithPriority() {
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "answer", nil })
	chat, err := ratelimit.NewConcurrency(llm, ratelimit.ConcurrencyConfig{MaxStarvation: time.Minute})
	if err != nil {
		panic(err)
	}
	handler := func(w http.ResponseWriter, req *http.Request) {
		ctx := ratelimit.WithPriority(req.Context(), ratelimit.Interactive)
		out, err := chat.Invoke(ctx, req.URL.Query().Get("q"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, out)
	}
	_ = handler
	out, _ := chat.Invoke(ratelimit.WithPriority(context.Background(), ratelimit.Batch), "an evaluation")
	fmt.Println(out)
	// Output: answer
}

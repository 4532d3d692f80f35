package pool_test

import (
	"context"
	"fmt"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
)

// deploymentOf is one deployment of a model: it answers with its name.
func deploymentOf(name string) core.Runnable {
	return core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return name, nil })
}

// The pool goes inside the retry layer, so that each attempt is a fresh
// choice among the deployments that can serve.
func ExampleNew() {
	p, err := pool.New([]pool.Deployment{
		{Name: "eastus", Runnable: deploymentOf("eastus")},
		{Name: "westeu", Runnable: deploymentOf("westeu"), Weight: 2}, // twice the quota
	})
	if err != nil {
		panic(err)
	}
	r := retry.NewRetryRunnable(p, retry.DefaultRetryConfig())
	out, _ := r.Invoke(context.Background(), "hello")
	fmt.Println(out == "eastus" || out == "westeu")
	// Output: true
}

// With affinity, a conversation stays on one deployment while it can
// serve, where its prompt cache is warm.
func ExampleWithAffinity() {
	p, _ := pool.New([]pool.Deployment{
		{Name: "a", Runnable: deploymentOf("a")},
		{Name: "b", Runnable: deploymentOf("b")},
		{Name: "c", Runnable: deploymentOf("c")},
	}, pool.WithAffinity(func(_ context.Context, in any) string { return in.(string) }))
	first, _ := p.Invoke(context.Background(), "conversation-42")
	same := true
	for range 10 {
		out, _ := p.Invoke(context.Background(), "conversation-42")
		same = same && out == first
	}
	fmt.Println(same)
	// Output: true
}

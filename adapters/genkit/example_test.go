package genkit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/firebase/genkit/go/ai"
	gk "github.com/firebase/genkit/go/genkit"

	"github.com/steadfast-go/steadfast/adapters/genkit"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// Every model call of a Generate goes through the steadfast chain: here a
// stand-in model that is rate limited once, with a Retry-After of 20 ms.
func ExampleMiddleware() {
	f := &flaky{fails: []error{&llmhttp.APIError{Status: 429, After: 20 * time.Millisecond, Err: errors.New("429 Too Many Requests")}}}
	model := gk.DefineModelAction(g, "example/middleware", &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true}}, modelAction(f.generate))
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 10 * time.Millisecond, MaxBackoff: time.Second}
	resp, err := gk.Generate(context.Background(), g, ai.WithModel(model), ai.WithPrompt("Say hello"),
		ai.WithUse(genkit.Middleware(retry.Middleware(cfg))))
	fmt.Println(resp.Text(), err, f.count())
	// Output: Hello from Genkit <nil> 2
}

// FromModel makes a Genkit model a Runnable that any steadfast chain
// wraps: a fallback candidate, a pool deployment.
func ExampleFromModel() {
	f := &flaky{}
	model := gk.DefineModelAction(g, "example/from-model", &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true}}, modelAction(f.generate))
	out, err := genkit.FromModel(model).Invoke(context.Background(), &ai.ModelRequest{Messages: []*ai.Message{ai.NewUserTextMessage("Say hello")}})
	fmt.Println(out.(*ai.ModelResponse).Text(), err)
	// Output: Hello from Genkit <nil>
}

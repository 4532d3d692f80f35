package adk_test

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/workflow"
	"google.golang.org/genai"

	"github.com/steadfast-go/steadfast/adapters/adk"
	"github.com/steadfast-go/steadfast/retry"
)

// An llmagent whose model is retried the steadfast way: the model here is
// a stand-in for gemini.NewModel that is overloaded once.
func ExampleToLLM() {
	var m model.LLM = &scripted{fails: []error{genai.APIError{Code: 503, Status: "UNAVAILABLE"}}, text: "Hello!"}
	chain, err := retry.New(adk.FromLLM(m), retry.RetryConfig{MaxRetries: 3, InitialBackoff: 10 * time.Millisecond, MaxBackoff: time.Second})
	if err != nil {
		panic(err)
	}
	a, err := llmagent.New(llmagent.Config{Name: "helper", Description: "answers", Model: adk.ToLLM(chain, "gemini-2.5-flash")})
	if err != nil {
		panic(err)
	}
	r, err := runner.NewInMemory("app", a)
	if err != nil {
		panic(err)
	}
	for ev, err := range r.Run(context.Background(), "user", "session", genai.NewContentFromText("Say hello", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			panic(err)
		}
		if ev.IsFinalResponse() {
			fmt.Println(ev.Content.Parts[0].Text)
		}
	}
	// Output: Hello!
}

// FromLLM makes an ADK model a Runnable that any steadfast chain wraps.
func ExampleFromLLM() {
	m := &scripted{text: "Hi"}
	out, err := adk.FromLLM(m).Invoke(context.Background(), &model.LLMRequest{})
	fmt.Println(out.(*model.LLMResponse).Content.Parts[0].Text, err)
	// Output: Hi <nil>
}

// ShouldRetry gives an ADK workflow the retry rules: a 503 is retried, a
// 401 never.
func ExampleShouldRetry() {
	cfg := workflow.RetryConfig{MaxAttempts: 3, ShouldRetry: adk.ShouldRetry}
	fmt.Println(cfg.ShouldRetry(genai.APIError{Code: 503}), cfg.ShouldRetry(genai.APIError{Code: 401}))
	// Output: true false
}

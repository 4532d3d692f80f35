// Command adk runs an ADK llmagent through ADK's runner on a model chain
// built with steadfast: fallback(retry(primary), retry(backup)), where the
// primary is overloaded once and then answers, and a rejected key never
// retried. The models are fakes that misbehave on purpose. It prints what
// happened.
//
//	cd adapters/adk && go run ./examples/adk
package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/genai"

	"github.com/steadfast-go/steadfast/adapters/adk"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/retry"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "adk:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second}
	onRetry := retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) {
		fmt.Fprintf(w, "  %s: attempt %d failed (%v), retrying in %v\n", ev.Operation, ev.Attempt, ev.Err, ev.Delay.Round(time.Millisecond))
	})
	primary := &fake{name: "primary", fails: []error{overloaded}, answer: "Hello from the primary model"}
	backup := &fake{name: "backup", answer: "Hello from the backup model"}
	var chain []core.Runnable
	for _, m := range []*fake{primary, backup} {
		r, err := retry.New(adk.FromLLM(m), cfg, onRetry)
		if err != nil {
			return err
		}
		chain = append(chain, r)
	}
	fb, err := fallback.New(chain)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "an agent whose model is overloaded once:")
	if err := ask(w, adk.ToLLM(fb, "primary-or-backup")); err != nil {
		return err
	}

	rejected := &fake{name: "rejected", fails: []error{genai.APIError{Code: 401, Status: "UNAUTHENTICATED", Message: "API key not valid."}}}
	r, err := retry.New(adk.FromLLM(rejected), cfg, onRetry)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "an agent whose key is rejected:")
	err = ask(w, adk.ToLLM(r, "rejected"))
	fmt.Fprintf(w, "  error: %v\n  model calls: %d (a 401 is never retried)\n", err, rejected.count())
	return nil
}

// overloaded is Gemini's 503.
var overloaded = genai.APIError{Code: 503, Status: "UNAVAILABLE", Message: "The model is overloaded."}

// ask runs an llmagent on m through an in-memory runner and prints its
// final answer.
func ask(w io.Writer, m model.LLM) error {
	a, err := llmagent.New(llmagent.Config{Name: "helper", Description: "answers", Model: m})
	if err != nil {
		return err
	}
	r, err := runner.NewInMemory("example", a)
	if err != nil {
		return err
	}
	msg := genai.NewContentFromText("Say hello", genai.RoleUser)
	for ev, err := range r.Run(context.Background(), "user", "session", msg, agent.RunConfig{StreamingMode: agent.StreamingModeSSE}) {
		if err != nil {
			return err
		}
		if ev.IsFinalResponse() && ev.Content != nil {
			var b strings.Builder
			for _, p := range ev.Content.Parts {
				b.WriteString(p.Text)
			}
			fmt.Fprintf(w, "  answer: %q\n", b.String())
		}
	}
	return nil
}

// fake is an ADK model that fails with its errors, in order, then
// streams its answer in two parts.
type fake struct {
	name   string
	mu     sync.Mutex
	fails  []error
	calls  int
	answer string
}

func (f *fake) Name() string { return f.name }

func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fake) GenerateContent(_ context.Context, _ *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		f.mu.Lock()
		f.calls++
		var err error
		if len(f.fails) > 0 {
			err, f.fails = f.fails[0], f.fails[1:]
		}
		f.mu.Unlock()
		if err != nil {
			yield(nil, err)
			return
		}
		if stream {
			half := len(f.answer) / 2
			for _, part := range []string{f.answer[:half], f.answer[half:]} {
				if !yield(&model.LLMResponse{Content: genai.NewContentFromText(part, genai.RoleModel), Partial: true}, nil) {
					return
				}
			}
		}
		yield(&model.LLMResponse{Content: genai.NewContentFromText(f.answer, genai.RoleModel), TurnComplete: true}, nil)
	}
}

// Command genkit runs a streaming Genkit Generate whose every model call
// goes through steadfast's retry layer: the model (a fake that misbehaves
// on purpose) answers 429 with a Retry-After of 300 ms, then streams its
// answer. The caller's callback sees each chunk once, and the wait is the
// server's. It prints what happened.
//
//	cd adapters/genkit && go run ./examples/genkit
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/firebase/genkit/go/ai"
	gk "github.com/firebase/genkit/go/genkit"

	"github.com/steadfast-go/steadfast/adapters/genkit"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := run(gk.Init(ctx), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "genkit:", err)
		os.Exit(1)
	}
}

func run(g *gk.Genkit, w io.Writer) error {
	m := &limited{}
	model := gk.DefineModelAction(g, "example/limited", &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true}}, m.generate)
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second}
	onRetry := retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) {
		fmt.Fprintf(w, "attempt %d failed (%v), retrying in %v (%s)\n", ev.Attempt, ev.Err, ev.Delay.Round(time.Millisecond), ev.Source)
	})
	resp, err := gk.Generate(context.Background(), g, ai.WithModel(model), ai.WithPrompt("Say hello"),
		ai.WithUse(genkit.Middleware(retry.Middleware(cfg, onRetry))),
		ai.WithStreaming(func(_ context.Context, c *ai.ModelResponseChunk) error {
			fmt.Fprintf(w, "chunk: %q\n", c.Text())
			return nil
		}))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "answer: %q after %d model calls\n", resp.Text(), m.count())
	return nil
}

// limited is a model that answers 429 once, then streams its answer.
type limited struct {
	mu    sync.Mutex
	calls int
}

func (l *limited) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

func (l *limited) generate(ctx context.Context, _ *ai.ModelRequest, _ map[string]any, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	l.mu.Lock()
	l.calls++
	first := l.calls == 1
	l.mu.Unlock()
	if first {
		return nil, &llmhttp.APIError{Status: 429, Code: "rate_limit_exceeded", After: 300 * time.Millisecond, Err: errors.New("429 Too Many Requests")}
	}
	words := []string{"Hello", " from", " Genkit"}
	if cb != nil {
		for _, word := range words {
			if err := cb(ctx, &ai.ModelResponseChunk{Content: []*ai.Part{ai.NewTextPart(word)}}); err != nil {
				return nil, err
			}
		}
	}
	return &ai.ModelResponse{Message: ai.NewModelTextMessage(strings.Join(words, "")), FinishReason: ai.FinishReasonStop}, nil
}

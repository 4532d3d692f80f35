// Command langchaingo wraps langchaingo models in steadfast: an llms.Model
// made of fallback(retry(model-a), retry(model-b)), with fake models that
// misbehave on purpose, streamed through langchaingo's streaming function;
// then a langchaingo tool called through retry that deduplicates by the
// call's invocation id. It prints what happened.
//
//	cd adapters/langchaingo && go run ./examples/langchaingo
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/steadfast-go/steadfast/adapters/langchaingo"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/retry"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "langchaingo:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	ctx := context.Background()
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second}
	onRetry := retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) {
		fmt.Fprintf(w, "  %s: attempt %d failed (%v), retrying in %v\n", ev.Operation, ev.Attempt, ev.Err, ev.Delay.Round(time.Millisecond))
	})
	var candidates []core.Runnable
	for _, c := range []struct {
		name string
		m    llms.Model
	}{{"model-a", overloaded{}}, {"model-b", streaming{}}} {
		r, err := langchaingo.FromModel(c.m, langchaingo.WithName(c.name))
		if err != nil {
			return err
		}
		rr, err := retry.New(r, cfg, onRetry)
		if err != nil {
			return err
		}
		candidates = append(candidates, rr)
	}
	fb, err := fallback.New(candidates)
	if err != nil {
		return err
	}
	lm, err := langchaingo.ToModel(fb)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "model: fallback(retry(model-a), retry(model-b)), streamed")
	var chunks []string
	answer, err := llms.GenerateFromSinglePrompt(ctx, lm, "Say hello", llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
		chunks = append(chunks, string(c))
		return nil
	}))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  chunks seen by the streaming function: %q; answer: %q\n", chunks, answer)
	return ticket(ctx, w)
}

// ticket calls a langchaingo tool that creates a ticket and then loses its
// answer: under retry (RetryNonIdempotent, as the tool deduplicates) the
// second attempt finds the ticket by the call's invocation id.
func ticket(ctx context.Context, w io.Writer) error {
	tk := &ticketTool{byInvocation: map[string]int{}}
	var t tools.Tool = tk
	call := core.RunnableFunc(func(ctx context.Context, in any, _ ...core.Option) (any, error) {
		return t.Call(ctx, in.(string))
	})
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second, RetryNonIdempotent: true}
	r, err := retry.New(call, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "tool: retry(create_ticket), deduplicated by invocation id")
	out, err := r.Invoke(ctx, "printer on fire", core.WithOperation(t.Name()))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  result: %v; tickets created: %d, tool runs: %d\n", out, tk.created, tk.runs)
	return nil
}

type statusError struct{ code int }

func (e statusError) Error() string   { return fmt.Sprintf("provider answered %d", e.code) }
func (e statusError) StatusCode() int { return e.code }

// overloaded is a langchaingo model whose provider is overloaded.
type overloaded struct{}

func (overloaded) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	return nil, statusError{503}
}
func (m overloaded) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// streaming is a langchaingo model that streams its answer in two chunks.
type streaming struct{}

func (streaming) GenerateContent(ctx context.Context, _ []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var co llms.CallOptions
	for _, o := range opts {
		o(&co)
	}
	for _, c := range []string{"Hello", " from model-b"} {
		if co.StreamingFunc != nil {
			if err := co.StreamingFunc(ctx, []byte(c)); err != nil {
				return nil, err
			}
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "Hello from model-b", StopReason: "stop"}}}, nil
}
func (m streaming) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// ticketTool is a langchaingo tool that creates a ticket per invocation
// id; its first run loses the connection after creating it.
type ticketTool struct {
	mu           sync.Mutex
	byInvocation map[string]int
	created      int
	runs         int
}

func (*ticketTool) Name() string        { return "create_ticket" }
func (*ticketTool) Description() string { return "opens a support ticket" }

func (t *ticketTool) Call(ctx context.Context, _ string) (string, error) {
	info, _ := retry.AttemptFromContext(ctx)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.runs++
	id, ok := t.byInvocation[info.InvocationID]
	if !ok {
		t.created++
		id = 1000 + t.created
		t.byInvocation[info.InvocationID] = id
	}
	if t.runs == 1 {
		return "", statusError{502} // the ticket exists, the answer is lost
	}
	return fmt.Sprintf("ticket #%d", id), nil
}

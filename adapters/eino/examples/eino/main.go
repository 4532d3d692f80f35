// Command eino runs an eino chain whose chat model is
// fallback(retry(model-a), retry(model-b)), with fake eino models that
// misbehave on purpose, then a tool call through retry that the tool
// deduplicates by its invocation id. It prints what happened.
//
//	cd adapters/eino && go run ./examples/eino
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/steadfast-go/steadfast/adapters/eino"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/retry"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "eino:", err)
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
	for name, m := range map[string]model.BaseChatModel{"model-a": &overloaded{}, "model-b": &answering{}} {
		r, err := eino.FromChatModel(m, eino.WithName(name))
		if err != nil {
			return err
		}
		rr, err := retry.New(r, cfg, onRetry)
		if err != nil {
			return err
		}
		candidates = append(candidates, rr)
	}
	sortByName(candidates)
	fb, err := fallback.New(candidates)
	if err != nil {
		return err
	}
	chatModel, err := eino.ToChatModel(fb)
	if err != nil {
		return err
	}
	chain, err := compose.NewChain[[]*schema.Message, *schema.Message]().AppendChatModel(chatModel).Compile(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "chain: fallback(retry(model-a), retry(model-b))")
	out, err := chain.Invoke(ctx, []*schema.Message{schema.UserMessage("Say hello")})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  answer: %q (usage %d tokens)\n", out.Content, out.ResponseMeta.Usage.TotalTokens)
	return ticket(ctx, w)
}

// ticket calls a tool that creates a ticket and then loses its answer:
// under retry (RetryNonIdempotent, as the tool deduplicates) the second
// attempt finds the ticket by the call's invocation id.
func ticket(ctx context.Context, w io.Writer) error {
	tk := &ticketTool{byInvocation: map[string]int{}}
	r, err := eino.FromTool(ctx, tk)
	if err != nil {
		return err
	}
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second, RetryNonIdempotent: true}
	rr, err := retry.New(r, cfg)
	if err != nil {
		return err
	}
	back, err := eino.ToTool(rr, &schema.ToolInfo{Name: "create_ticket", Desc: "opens a support ticket"})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "tool: retry(create_ticket), deduplicated by invocation id")
	out, err := back.InvokableRun(ctx, `{"title":"printer on fire"}`)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  result: %s; tickets created: %d, tool runs: %d\n", out, tk.created, tk.runs)
	return nil
}

func sortByName(rs []core.Runnable) {
	if core.NameOf(rs[0]) > core.NameOf(rs[1]) {
		rs[0], rs[1] = rs[1], rs[0]
	}
}

// overloaded is an eino chat model whose provider is overloaded.
type overloaded struct{}

type statusError struct{ code int }

func (e statusError) Error() string   { return fmt.Sprintf("provider answered %d", e.code) }
func (e statusError) StatusCode() int { return e.code }

func (*overloaded) Generate(context.Context, []*schema.Message, ...model.Option) (*schema.Message, error) {
	return nil, statusError{503}
}
func (*overloaded) Stream(context.Context, []*schema.Message, ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return nil, statusError{503}
}

// answering is an eino chat model that answers.
type answering struct{}

func (*answering) Generate(context.Context, []*schema.Message, ...model.Option) (*schema.Message, error) {
	m := schema.AssistantMessage("Hello from model-b", nil)
	m.ResponseMeta = &schema.ResponseMeta{FinishReason: "stop", Usage: &schema.TokenUsage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}}
	return m, nil
}
func (a *answering) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	m, err := a.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{m}), nil
}

// ticketTool creates a ticket per invocation id; its first run loses the
// connection after creating it.
type ticketTool struct {
	mu           sync.Mutex
	byInvocation map[string]int
	created      int
	runs         int
}

func (*ticketTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "create_ticket", Desc: "opens a support ticket"}, nil
}

func (t *ticketTool) InvokableRun(ctx context.Context, _ string, _ ...tool.Option) (string, error) {
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

package eino_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/adapters/eino"
	"github.com/steadfast-go/steadfast/budget"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/retry"
)

// agentModel is a provider that always asks for the echo tool, so the
// ReAct loop never ends on its own; it fails at random, seeded (a 503),
// and counts the requests that reached it.
type agentModel struct {
	mu       *sync.Mutex
	rng      *rand.Rand
	requests *int
	own      int // the requests that reached this one
}

func (m *agentModel) Invoke(ctx context.Context, in any, _ ...core.Option) (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	*m.requests++
	m.own++
	if m.rng.IntN(3) == 0 {
		return nil, overloaded{}
	}
	return &schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{{
		ID: "call", Type: "function", Function: schema.FunctionCall{Name: "echo", Arguments: `{"x":1}`},
	}}}, nil
}

func (m *agentModel) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(m.Invoke).Batch(ctx, in, opts...)
}

func (m *agentModel) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(m.Invoke).Stream(ctx, in, opts...)
}

// A ReAct loop (eino's react agent) over retry ⊃ fallback ⊃ [retry ⊃ a
// flaky primary, a flaky backup], in a run of N calls: the providers see
// exactly N requests, retries and fallbacks included, and the agent ends
// with the run's *budget.RunError (#73, item 5).
func TestAReActLoopMakesExactlyTheRunsCalls(t *testing.T) {
	for _, limit := range []int{1, 2, 7, 20} {
		synctest.Test(t, func(t *testing.T) {
			requests := 0
			var mu sync.Mutex
			primary := &agentModel{mu: &mu, rng: rand.New(rand.NewPCG(uint64(limit), 1)), requests: &requests}
			backup := &agentModel{mu: &mu, rng: rand.New(rand.NewPCG(uint64(limit), 2)), requests: &requests}
			quiet := []retry.Option{retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider())}
			inner, err := retry.New(primary, retry.DefaultRetryConfig(), quiet...)
			if err != nil {
				t.Fatal(err)
			}
			fb, err := fallback.New([]core.Runnable{inner, backup},
				fallback.WithTracerProvider(tnoop.NewTracerProvider()), fallback.WithMeterProvider(noop.NewMeterProvider()))
			if err != nil {
				t.Fatal(err)
			}
			outer, err := retry.New(fb, retry.DefaultRetryConfig(), quiet...)
			if err != nil {
				t.Fatal(err)
			}
			cm, err := eino.ToChatModel(outer)
			if err != nil {
				t.Fatal(err)
			}
			agent, err := react.NewAgent(t.Context(), &react.AgentConfig{
				ToolCallingModel: cm,
				ToolsConfig:      compose.ToolsNodeConfig{Tools: []tool.BaseTool{&echoTool{}}},
				MaxStep:          1000,
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, err := budget.WithRun(t.Context(), budget.Run{Calls: limit})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = agent.Generate(ctx, []*schema.Message{schema.UserMessage("loop")})
			var re *budget.RunError
			if !errors.As(err, &re) || re.Limit != "calls" {
				t.Fatalf("limit %d: the agent ended with %v, not the run's *budget.RunError", limit, err)
			}
			if requests != limit {
				t.Fatalf("a run of %d calls made %d provider requests", limit, requests)
			}
			if limit == 20 && backup.own == 0 {
				t.Fatalf("primary %d requests, backup %d: the run of 20 should have retried and fallen back", primary.own, backup.own)
			}
			t.Logf("a run of %d calls: %d requests (primary %d, backup %d), ended in %v", limit, requests, primary.own, backup.own, time.Since(start))
		})
	}
}

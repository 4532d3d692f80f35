package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// task is one LLM call: a summary or a sentiment of an article.
type task struct {
	Article int    `json:"article"`
	Kind    string `json:"kind"` // "summarise" or "sentiment"
}

// tooManyRequests is the simulated provider's 429.
type tooManyRequests struct{}

func (tooManyRequests) Error() string   { return "llm: rate limit exceeded (429)" }
func (tooManyRequests) StatusCode() int { return 429 }

// llm answers 429 with probability rateLimit. Whether attempt n of a task
// is refused depends on the seed, the task and n alone; n counts the
// call's attempts across activity attempts, so a seeded run gives the
// same table on any worker.
type llm struct {
	rateLimit float64
	seed      uint64
	latency   time.Duration
}

func (l *llm) Invoke(ctx context.Context, input any, _ ...core.Option) (any, error) {
	t, ok := input.(task)
	if !ok {
		return nil, retry.Permanent(fmt.Errorf("llm: input is %T, want a task", input))
	}
	n := 1
	if info, ok := retry.AttemptFromContext(ctx); ok {
		n = info.Attempt
	}
	select {
	case <-time.After(l.latency):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	stream := uint64(t.Article)<<16 | uint64(n)
	if t.Kind == "sentiment" {
		stream |= 1 << 8
	}
	if rand.New(rand.NewPCG(l.seed, stream)).Float64() < l.rateLimit {
		return nil, tooManyRequests{}
	}
	return fmt.Sprintf("%s of article %d", t.Kind, t.Article), nil
}

func (l *llm) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(l.Invoke).Batch(ctx, inputs, opts...)
}

func (l *llm) Stream(context.Context, any, ...core.Option) (<-chan any, error) {
	return nil, errors.New("llm: streams are not simulated")
}

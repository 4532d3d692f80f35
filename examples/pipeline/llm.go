package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/steadfast-go/steadfast/chaos"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// task is one LLM call of the pipeline: a summary or a sentiment of an
// article.
type task struct {
	article int
	kind    string // "summarise" or "sentiment"
}

// rateLimitError is the simulated provider's 429.
type rateLimitError struct{}

func (rateLimitError) Error() string   { return "llm: rate limit exceeded (429)" }
func (rateLimitError) StatusCode() int { return 429 }

// simulatedLLM answers 429 with probability rateLimit. Whether attempt n of
// a task is refused depends only on the seed, the task and n, so a seeded
// run gives the same counts however the workers interleave.
type simulatedLLM struct {
	rateLimit float64
	seed      uint64
	latency   time.Duration
}

func (l *simulatedLLM) Invoke(ctx context.Context, input any, _ ...core.Option) (any, error) {
	t := input.(task)
	attempt := 1
	if info, ok := retry.AttemptFromContext(ctx); ok {
		attempt = info.Attempt
	}
	timer := time.NewTimer(l.latency)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	kind := uint64(0)
	if t.kind == "sentiment" {
		kind = 1
	}
	rng := rand.New(rand.NewPCG(l.seed, uint64(t.article)<<16|kind<<8|uint64(attempt)))
	if rng.Float64() < l.rateLimit {
		return nil, rateLimitError{}
	}
	return fmt.Sprintf("%s of article %d", t.kind, t.article), nil
}

// faults are the failures -chaos injects in place of the simulated LLM's
// own 429s, at rates that add up to about -rate-limit, each seeded from
// -seed: rate limits with a Retry-After, overloads, server errors, and,
// rarely, a quota spent, which no retry fixes.
func faults(cfg config) []chaos.Fault {
	p := cfg.rateLimit
	return []chaos.Fault{
		chaos.QuotaExhausted().Rate(p/50, cfg.seed),
		chaos.RateLimited(200*time.Millisecond).Rate(p/2, cfg.seed+1),
		chaos.Overloaded().Rate(p/4, cfg.seed+2),
		chaos.ServerError().Rate(p/4, cfg.seed+3),
	}
}

func (l *simulatedLLM) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(l.Invoke).Batch(ctx, inputs, opts...)
}

func (l *simulatedLLM) Stream(context.Context, any, ...core.Option) (<-chan any, error) {
	return nil, errors.New("simulatedLLM: streaming is not simulated")
}

package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/steadfast-go/steadfast/core"
)

// rateLimited is a 429 whose Retry-After is longer than the caller will
// wait.
type rateLimited struct{ after time.Duration }

func (e rateLimited) Error() string             { return fmt.Sprintf("429: quota spent, retry after %v", e.after) }
func (e rateLimited) StatusCode() int           { return 429 }
func (e rateLimited) RetryAfter() time.Duration { return e.after }

// quotaSpent answers every call with a 429 and a ten-minute Retry-After.
type quotaSpent struct{}

func (quotaSpent) Name() string { return "model-a" }
func (quotaSpent) Invoke(context.Context, any, ...core.Option) (any, error) {
	return nil, rateLimited{10 * time.Minute}
}
func (quotaSpent) Batch(context.Context, []any, ...core.Option) ([]any, error) {
	return nil, rateLimited{10 * time.Minute}
}
func (quotaSpent) Stream(context.Context, any, ...core.Option) (<-chan any, error) {
	return nil, rateLimited{10 * time.Minute}
}

// silent opens streams that never send a first token.
type silent struct{ quotaSpent }

func (silent) Name() string { return "model-b" }
func (silent) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	ch := make(chan any)
	go func() {
		defer close(ch)
		<-ctx.Done() // stops when the retry layer gives up on it
	}()
	return ch, nil
}

// answering streams its answer in two chunks.
type answering struct{ quotaSpent }

func (answering) Name() string { return "model-c" }
func (answering) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	ch := make(chan any)
	go func() {
		defer close(ch)
		for _, chunk := range []string{"Hello", " from model-c"} {
			if !send(ctx, ch, chunk) {
				return
			}
		}
	}()
	return ch, nil
}

// sometimesSlow answers after 10ms, but 200ms on every fifth call.
// Hedged attempts call it concurrently.
type sometimesSlow struct {
	core.RunnableFunc
	calls atomic.Int32
}

func (m *sometimesSlow) Invoke(ctx context.Context, _ any, _ ...core.Option) (any, error) {
	d := 10 * time.Millisecond
	if m.calls.Add(1)%5 == 0 {
		d = 200 * time.Millisecond
	}
	select {
	case <-time.After(d):
		return "ok", nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// send delivers v on ch unless ctx ends first: a producer never blocks on
// a consumer that has gone.
func send(ctx context.Context, ch chan<- any, v any) bool {
	select {
	case ch <- v:
		return true
	case <-ctx.Done():
		return false
	}
}

package pool_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
)

// A deployment whose stream sends nothing within the retry layer's
// FirstChunkTimeout ends its turn: the next attempt goes to another
// deployment, though affinity prefers the silent one.
func TestASilentStreamSendsTheNextAttemptElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var silentCalls atomic.Int32
		silent := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
			silentCalls.Add(1)
			<-ctx.Done()
			return nil, ctx.Err()
		})
		b := mock.New(mock.Stream(nil, "b"))
		p := newPool(t, []pool.Deployment{{Name: "a", Runnable: silent}, {Name: "b", Runnable: b}},
			pool.WithAffinity(func(context.Context, any) string { return keyFor(t, "a", "a", "b") }))
		cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: time.Second, FirstChunkTimeout: 5 * time.Second}
		r, err := retry.New(p, cfg, slices.Clone(quiet)...)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := r.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if got := mock.Drain(ch); len(got) != 1 || got[0] != "b" {
			t.Fatalf("stream = %v, want b's chunk", got)
		}
		if n := silentCalls.Load(); n != 1 || b.CallCount() != 1 {
			t.Errorf("calls: silent a %d, b %d; want one each", n, b.CallCount())
		}
	})
}

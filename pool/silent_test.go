package pool_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
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

// In docs/deployments.md's chain, fallback over retry over a pool, a
// silent deployment ends its own turn, not the pool's: the next attempt
// goes to another deployment, and the fallback's other model is asked
// only once no deployment is left.
func TestASilentDeploymentInAFallbacksPoolEndsItsOwnTurn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		b     func() core.Runnable
		want  string
		calls int // of the silent deployment a
	}{
		{name: "b serves", b: func() core.Runnable { return mock.New(mock.OK("b")) }, want: "b", calls: 1},
		{name: "b silent too", b: func() core.Runnable { return hanging(new(atomic.Int32)) }, want: "other", calls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var aCalls atomic.Int32
				p := newPool(t, []pool.Deployment{{Name: "a", Runnable: hanging(&aCalls)}, {Name: "b", Runnable: tc.b()}},
					pool.WithAffinity(func(context.Context, any) string { return keyFor(t, "a", "a", "b") }))
				cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: time.Second, PerAttemptTimeout: 10 * time.Second}
				pooled, err := retry.New(p, cfg, slices.Clone(quiet)...)
				if err != nil {
					t.Fatal(err)
				}
				other := mock.New(mock.OK("other"))
				f, err := fallback.New([]core.Runnable{pooled, other})
				if err != nil {
					t.Fatal(err)
				}
				out, err := f.Invoke(t.Context(), "q")
				if err != nil || out != tc.want {
					t.Fatalf("Invoke() = %v, %v; want %s", out, err, tc.want)
				}
				if n := aCalls.Load(); n != int32(tc.calls) {
					t.Errorf("the silent deployment was called %d times, want %d", n, tc.calls)
				}
			})
		})
	}
}

// hanging is a deployment that answers nothing until its context ends.
func hanging(calls *atomic.Int32) core.Runnable {
	return core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		calls.Add(1)
		<-ctx.Done()
		return nil, ctx.Err()
	})
}

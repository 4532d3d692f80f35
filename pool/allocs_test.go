package pool_test

import (
	"context"
	"testing"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/race"
	"github.com/steadfast-go/steadfast/pool"
)

// The pool's success path allocates once a call: the meter its speed per
// token is read from (usage.Under: the context and the meter in one). A
// regression fails here on any machine; the timings are BenchmarkInvoke's.
func TestInvokeAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	ok := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	for _, tc := range []struct {
		name string
		opts []pool.Option
		want float64
	}{
		{"pool", nil, 1},
		{"pool with affinity", []pool.Option{pool.WithAffinity(func(context.Context, any) string { return "session-42" })}, 1},
	} {
		p := newPool(t, []pool.Deployment{{Name: "a", Runnable: ok}, {Name: "b", Runnable: ok}, {Name: "c", Runnable: ok}}, tc.opts...)
		ctx := context.Background()
		if got := testing.AllocsPerRun(200, func() { _, _ = p.Invoke(ctx, "q") }); got != tc.want {
			t.Errorf("%s: %v allocations a call, want %v", tc.name, got, tc.want)
		}
	}
}

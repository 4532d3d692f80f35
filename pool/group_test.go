package pool_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/pool"
)

// Three keys in two groups: a 429 with Retry-After 2 s on one key of
// group a cools both of a's keys; the call that met it goes on to group b
// at once, and nothing reaches group a before the 2 s are up.
func TestARateLimitCoolsTheWholeGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		sent := map[string][]time.Duration{}
		dep := func(name, group string, script ...mock.Result) pool.Deployment {
			m := mock.New(script...)
			return pool.Deployment{Name: name, Group: group, Runnable: core.RunnableFunc(func(ctx context.Context, in any, opts ...core.Option) (any, error) {
				sent[name] = append(sent[name], time.Since(start))
				return m.Invoke(ctx, in, opts...)
			})}
		}
		p := newPool(t, []pool.Deployment{
			dep("a1", "org-a", mock.Fail(throttled(2*time.Second)), mock.OK("a1")),
			dep("a2", "org-a", mock.Fail(throttled(2*time.Second)), mock.OK("a2")),
			dep("b", "org-b", mock.OK("b")),
		})
		r := retried(t, p)
		var hit time.Duration = -1 // when group a answered its 429
		for i := range 40 {
			before := len(sent["a1"]) + len(sent["a2"])
			callStart := time.Since(start)
			out, err := r.Invoke(t.Context(), "q")
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			if hit < 0 && len(sent["a1"])+len(sent["a2"]) > before {
				hit = callStart
				if out != "b" || time.Since(start)-callStart > time.Nanosecond {
					t.Errorf("the call that met the 429 = %v after %v; want b at once", out, time.Since(start)-callStart)
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		if hit < 0 {
			t.Fatal("no call went to group a")
		}
		for _, name := range []string{"a1", "a2"} {
			for _, at := range sent[name] {
				if at > hit && at < hit+2*time.Second {
					t.Errorf("%s was sent a call %v after the group's 429; want none before 2s", name, at-hit)
				}
			}
		}
		if n := len(sent["a1"]) + len(sent["a2"]); n < 2 {
			t.Errorf("group a was sent %d calls in all; want it back after 2s", n)
		}
	})
}

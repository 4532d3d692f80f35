package fleet_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"
	mnoop "go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fleet"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// waitFor polls cond for up to d: these tests watch a real server.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("after %v: %s", d, what)
}

// Redis paused, then killed, in the middle of a run, and started again,
// under the recommended chain (retry with the fleet's budget, around a
// breaker, around the fleet's limiter counting tokens): no call fails or
// hangs because of it, the circuit never opens, both the Limiter and the
// Budget fall back, and both go back to Redis when it answers. Streams
// run beside the calls, half of them abandoned by their consumer.
func TestRedisStoppedMidRun(t *testing.T) {
	s := startServer(t)
	c := dial(t, s.addr())
	key := uniqueKey(t)
	lim := newLimiter(t, c, key, 2000, 50, fleet.WithFallbackShare(0.5))
	budget := newBudget(t, c, key, fleet.WithSyncInterval(20*time.Millisecond))
	var provider atomic.Int64
	inner := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
		if provider.Add(1)%5 == 0 {
			return nil, errDown{} // some failures, so the budget is asked
		}
		return answer{tokens: 3}, nil
	})
	limited, err := ratelimit.New(inner, lim, ratelimit.WithMeterProvider(mnoop.NewMeterProvider()),
		ratelimit.WithCost(func(any) int { return 5 }), ratelimit.WithUsage(func(out any) int {
			if a, ok := out.(answer); ok {
				return a.tokens
			}
			return -1
		}))
	if err != nil {
		t.Fatal(err)
	}
	cb, err := breaker.New(limited, gobreaker.Settings{Name: "llm"}, breaker.WithMeterProvider(mnoop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := retry.New(cb, retry.RetryConfig{MaxRetries: 5, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, BackoffFactor: 2},
		retry.WithBudget(budget), retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(mnoop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}

	var calls, failures, slowest atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				_, err := r.Invoke(context.Background(), "q")
				took := time.Since(start)
				calls.Add(1)
				if err != nil && !errors.Is(err, errDown{}) {
					failures.Add(1)
				}
				for d := int64(took); ; {
					if old := slowest.Load(); d <= old || slowest.CompareAndSwap(old, d) {
						break
					}
				}
			}
		})
	}
	var streams atomic.Int64
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			ch, err := r.Stream(ctx, "q")
			if err != nil {
				cancel()
				continue
			}
			for range ch {
				if i%2 == 0 {
					break // abandoned after its first value
				}
			}
			cancel()
			streams.Add(1)
		}
	})
	defer func() {
		close(stop)
		wg.Wait()
		if cb.State() != gobreaker.StateClosed || streams.Load() == 0 {
			t.Errorf("circuit %v and %d streams at the end, want closed and some", cb.State(), streams.Load())
		}
		t.Logf("%d calls, %d failed, the slowest took %v", calls.Load(), failures.Load(), time.Duration(slowest.Load()))
		if failures.Load() != 0 {
			t.Errorf("%d calls failed for a reason other than the provider's 503s", failures.Load())
		}
		// A call may wait up to a second for a paced retry, and a few
		// Redis timeouts of 50 ms; a hang on Redis would be seconds.
		if d := time.Duration(slowest.Load()); d > 2*time.Second {
			t.Errorf("the slowest call took %v; Redis must not make calls hang", d)
		}
	}()

	time.Sleep(200 * time.Millisecond)
	if lim.Degraded() || budget.Degraded() {
		t.Fatal("fell back with Redis up")
	}
	s.pause()
	waitFor(t, 2*time.Second, "the limiter and budget did not fall back from a paused Redis", func() bool {
		return lim.Degraded() && budget.Degraded()
	})
	time.Sleep(200 * time.Millisecond)
	s.resume()
	waitFor(t, 3*time.Second, "the limiter and budget did not resume after Redis did", func() bool {
		return !lim.Degraded() && !budget.Degraded()
	})
	s.stop()
	waitFor(t, 2*time.Second, "the limiter and budget did not fall back from a stopped Redis", func() bool {
		return lim.Degraded() && budget.Degraded()
	})
	time.Sleep(200 * time.Millisecond)
	s.start()
	waitFor(t, 3*time.Second, "the limiter and budget did not resume after Redis restarted", func() bool {
		return !lim.Degraded() && !budget.Degraded()
	})
	// Shared limiting resumed: the bucket is in the new server again.
	waitFor(t, time.Second, "the limiter's bucket is not in the restarted Redis", func() bool {
		n, err := c.Exists(context.Background(), "steadfast:limit:"+key).Result()
		return err == nil && n == 1
	})
}

// answer is the provider's output, reporting the tokens it used.
type answer struct{ tokens int }

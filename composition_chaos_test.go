package steadfast_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/chaos"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// The recommended chain, retry around breaker around ratelimit, over a
// resumable provider with chaos innermost: seeded 429s with a Retry-After,
// overloads, server errors, spent quotas, and streams that break, stall
// or fail in-band after a few chunks. 64 concurrent streams, some of whose
// consumers give up half-way. Whatever happens: no chunk is delivered
// twice or out of order, a stream that ends without an error has every
// chunk, no call makes more than MaxRetries+1 attempts, nothing hangs
// (synctest: every goroutine ends) and no goroutine is left (goleak).
func TestChaosThroughTheRecommendedChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, calls, maxRetries = 8, 64, 4
		provider := mock.NewResumable(n, 10*time.Millisecond, nil)
		faulty := chaos.New(provider,
			chaos.QuotaExhausted().Rate(0.02, 1),
			chaos.RateLimited(300*time.Millisecond).Rate(0.1, 2),
			chaos.Overloaded().Rate(0.1, 3),
			chaos.ServerError().Rate(0.05, 4),
			chaos.StreamBroken(3).Rate(0.15, 5),
			chaos.StreamStalled(5).Rate(0.1, 6),
			chaos.StreamError(2).Rate(0.1, 7),
		)
		var mu sync.Mutex
		attempts := map[int]int{}
		count := countingStreams{inner: faulty, mu: &mu, attempts: attempts}
		limiter, err := ratelimit.New(count, ratelimit.InProcess(rate.NewLimiter(200, 20)), ratelimit.WithMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		br, err := breaker.New(limiter, gobreaker.Settings{Name: "llm", Timeout: time.Second,
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 20 }})
		if err != nil {
			t.Fatal(err)
		}
		r, err := retry.New(br, retry.RetryConfig{MaxRetries: maxRetries, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second,
			Jitter: 0.2, ChunkTimeout: time.Second, ResumeStreams: true}, quiet...)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var completed, failed, abandoned int
		var tally sync.Mutex
		for i := range calls {
			wg.Go(func() {
				ctx, cancel := context.WithCancel(context.WithValue(t.Context(), callKey{}, i))
				defer cancel()
				ch, err := r.Stream(ctx, i)
				if err != nil {
					tally.Lock()
					failed++
					tally.Unlock()
					return
				}
				var got []any
				var last error
				for v := range ch {
					if e, ok := v.(error); ok {
						last = e
						continue
					}
					got = append(got, v)
					if i%8 == 7 && len(got) == 4 {
						cancel() // this consumer gives up half-way
					}
				}
				if want := numbered(n)[:len(got)]; !slices.Equal(got, want) {
					t.Errorf("call %d: chunks %v, want a prefix of 1..%d, each once", i, got, n)
				}
				tally.Lock()
				defer tally.Unlock()
				switch {
				case i%8 == 7 && len(got) == 4:
					abandoned++
				case last == nil && len(got) != n:
					t.Errorf("call %d: ended without an error after %d chunks of %d", i, len(got), n)
				case last == nil:
					completed++
				default:
					failed++
				}
			})
		}
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for i, a := range attempts {
			if a > maxRetries+1 {
				t.Errorf("call %d made %d attempts, want at most %d", i, a, maxRetries+1)
			}
		}
		total := 0
		for _, a := range attempts {
			total += a
		}
		if _, resumes := provider.Counts(); resumes == 0 || total <= calls {
			t.Errorf("%d attempts for %d calls, %d streams resumed: want the faults retried and resumed", total, calls, resumes)
		}
		if completed == 0 || completed+failed+abandoned != calls {
			t.Errorf("%d completed, %d failed, %d abandoned of %d calls; want every call accounted for, and some through", completed, failed, abandoned, calls)
		}
		t.Logf("%d completed, %d failed, %d abandoned; %d attempts", completed, failed, abandoned, total)
	})
}

type callKey struct{}

// countingStreams counts the streams opened and resumed for each call
// (by its callKey), below the breaker and the limiter: one per attempt.
type countingStreams struct {
	inner    *chaos.Runnable
	mu       *sync.Mutex
	attempts map[int]int
}

func (c countingStreams) count(ctx context.Context) {
	i, _ := ctx.Value(callKey{}).(int)
	c.mu.Lock()
	c.attempts[i]++
	c.mu.Unlock()
}

func (c countingStreams) Invoke(ctx context.Context, in any, opts ...core.Option) (any, error) {
	c.count(ctx)
	return c.inner.Invoke(ctx, in, opts...)
}

func (c countingStreams) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return c.inner.Batch(ctx, in, opts...)
}

func (c countingStreams) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	c.count(ctx)
	return c.inner.Stream(ctx, in, opts...)
}

func (c countingStreams) Resume(ctx context.Context, in, last any, opts ...core.Option) (<-chan any, error) {
	c.count(ctx)
	return c.inner.Resume(ctx, in, last, opts...)
}

func (c countingStreams) CanResume(ctx context.Context) bool { return c.inner.CanResume(ctx) }

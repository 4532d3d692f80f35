package pool_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/pool"
)

// keyedProvider is one API key of a provider: quota requests a window,
// 429 beyond, and OpenAI's headers on every answer.
type keyedProvider struct {
	quota  int
	window time.Duration
	mu     sync.Mutex
	start  time.Time
	used   int
	ok     int
	too    int
	limits llmhttp.RateLimitTracker
}

func (p *keyedProvider) Invoke(context.Context, any, ...core.Option) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.start.IsZero() || now.Sub(p.start) >= p.window {
		p.start, p.used = now.Truncate(p.window), 0
	}
	admitted := p.used < p.quota
	if admitted {
		p.used++
		p.ok++
	} else {
		p.too++
	}
	p.limits.Observe(&http.Response{Header: http.Header{
		"X-Ratelimit-Remaining-Requests": {strconv.Itoa(p.quota - p.used)},
		"X-Ratelimit-Reset-Requests":     {p.start.Add(p.window).Sub(now).String()},
	}})
	if !admitted {
		return nil, &mock.HTTPError{Code: 429}
	}
	return "ok", nil
}

func (p *keyedProvider) Batch(ctx context.Context, in []any, o ...core.Option) ([]any, error) {
	return core.RunnableFunc(p.Invoke).Batch(ctx, in, o...)
}

func (p *keyedProvider) Stream(ctx context.Context, in any, o ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(p.Invoke).Stream(ctx, in, o...)
}

func (p *keyedProvider) RateLimits() (llmhttp.RateLimits, bool) { return p.limits.RateLimits() }

// A deployment whose headers say it has no request left is passed over
// until their reset: the calls go to the other key, and none meets a 429
// while the keys together have room.
func TestHeadersSteerCallsToTheKeyWithRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := &keyedProvider{quota: 4, window: time.Second}, &keyedProvider{quota: 4, window: time.Second}
		p := newPool(t, []pool.Deployment{{Name: "a", Runnable: a}, {Name: "b", Runnable: b}})
		r := retried(t, p)
		for window := range 3 {
			for i := range 8 { // the two keys' quota, every window
				if _, err := r.Invoke(t.Context(), i); err != nil {
					t.Fatalf("window %d, call %d: %v", window, i, err)
				}
			}
			time.Sleep(time.Second)
		}
		if a.too+b.too != 0 || a.ok != 12 || b.ok != 12 {
			t.Errorf("ok %d and %d, 429s %d and %d; want 12 each and none", a.ok, b.ok, a.too, b.too)
		}

		// With both keys used up, the pool says until when, naming why.
		for range 8 {
			_, _ = p.Invoke(t.Context(), "q")
		}
		_, err := p.Invoke(t.Context(), "q")
		if ue, ok := err.(*pool.UnavailableError); !ok || ue.Wait <= 0 || ue.Deployments[0].Reason != "no requests left until its limits reset" {
			t.Errorf("both keys used up: Invoke() = %v, want a *pool.UnavailableError until the reset", err)
		}
		if a.too+b.too != 0 {
			t.Errorf("429s %d, want none: the pool did not send what the headers had no room for", a.too+b.too)
		}
	})
}

package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/ratelimit"
)

// windowedProvider allows quota requests a window, answers 429 beyond it,
// and says in OpenAI's headers, on every answer, what is left and when the
// window resets, as a provider adapter reads them (llmhttp.RateLimited).
type windowedProvider struct {
	quota  int
	window time.Duration
	mu     sync.Mutex
	start  time.Time
	used   int
	ok     int
	limits llmhttp.RateLimitTracker
	too    int
}

func (p *windowedProvider) Invoke(context.Context, any, ...core.Option) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.start.IsZero() || now.Sub(p.start) >= p.window {
		p.start, p.used = now.Truncate(p.window), 0
	}
	reset := p.start.Add(p.window).Sub(now)
	admitted := p.used < p.quota
	if admitted {
		p.used++
		p.ok++
	} else {
		p.too++
	}
	p.limits.Observe(&http.Response{Header: http.Header{
		"X-Ratelimit-Limit-Requests":     {strconv.Itoa(p.quota)},
		"X-Ratelimit-Remaining-Requests": {strconv.Itoa(p.quota - p.used)},
		"X-Ratelimit-Reset-Requests":     {reset.String()},
	}})
	if !admitted {
		return nil, &mock.HTTPError{Code: 429}
	}
	return "ok", nil
}

func (p *windowedProvider) Batch(ctx context.Context, in []any, o ...core.Option) ([]any, error) {
	return core.RunnableFunc(p.Invoke).Batch(ctx, in, o...)
}

func (p *windowedProvider) Stream(ctx context.Context, in any, o ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(p.Invoke).Stream(ctx, in, o...)
}

func (p *windowedProvider) RateLimits() (llmhttp.RateLimits, bool) { return p.limits.RateLimits() }

// hidden is p without RateLimits: a provider whose limits are learned
// only from its 429s.
type hidden struct{ p *windowedProvider }

func (h hidden) Invoke(ctx context.Context, in any, o ...core.Option) (any, error) {
	return h.p.Invoke(ctx, in, o...)
}
func (h hidden) Batch(ctx context.Context, in []any, o ...core.Option) ([]any, error) {
	return h.p.Batch(ctx, in, o...)
}
func (h hidden) Stream(ctx context.Context, in any, o ...core.Option) (<-chan any, error) {
	return h.p.Stream(ctx, in, o...)
}

// countingBackend admits every call at once, like a fleet Limiter with
// room, and counts them: header pacing does not depend on the backend.
type countingBackend struct{ n int }

func (b *countingBackend) Reserve(_ context.Context, n int, _ time.Duration) (time.Duration, bool, error) {
	b.n += n
	return 0, true, nil
}
func (b *countingBackend) Adjust(context.Context, int) {}

// A provider's limits, read from its headers, slow the calls down before
// it answers 429: calls that find none left wait for the reset. Without
// them the same calls meet 429s.
func TestCallsWaitForTheResetTheHeadersSay(t *testing.T) {
	for name, backend := range map[string]func() ratelimit.Backend{
		"in process":      func() ratelimit.Backend { return ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1)) },
		"another backend": func() ratelimit.Backend { return &countingBackend{} },
	} {
		synctest.Test(t, func(t *testing.T) {
			p := &windowedProvider{quota: 5, window: time.Second}
			r, err := ratelimit.New(p, backend(), ratelimit.WithMeterProvider(noop.NewMeterProvider()))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for i := range 23 {
				if _, err := r.Invoke(t.Context(), i); err != nil {
					t.Fatalf("%s: call %d: %v", name, i, err)
				}
			}
			if p.too != 0 || p.ok != 23 || time.Since(start) < 4*time.Second {
				t.Errorf("%s: %d ok, %d 429s in %v; want 23 ok, none refused, over 4 windows", name, p.ok, p.too, time.Since(start))
			}

			// A wait past WithMaxWait is refused here, not at the provider.
			r, _ = ratelimit.New(p, backend(), ratelimit.WithMeterProvider(noop.NewMeterProvider()), ratelimit.WithMaxWait(time.Millisecond))
			var limited int
			for i := range 10 {
				_, err := r.Invoke(t.Context(), i)
				if le, ok := errors.AsType[*ratelimit.LimitedError](err); ok && le.Wait > 0 {
					limited++
				}
			}
			if p.too != 0 || limited == 0 {
				t.Errorf("%s with WithMaxWait: %d 429s, %d refused here; want none at the provider, some here", name, p.too, limited)
			}
		})
	}

	synctest.Test(t, func(t *testing.T) {
		p := &windowedProvider{quota: 5, window: time.Second}
		r, _ := ratelimit.New(hidden{p}, ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1)), ratelimit.WithMeterProvider(noop.NewMeterProvider()))
		for i := range 23 {
			_, _ = r.Invoke(t.Context(), i)
		}
		if p.too == 0 {
			t.Errorf("without the headers: no 429s; the test does not show what the headers avoid")
		}
	})
}

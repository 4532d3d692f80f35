package mock

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
)

// Windowed is one API key of a provider: Quota calls a Window, a 429
// beyond, and on every answer OpenAI's headers saying what is left and
// when the window resets, which it reads as a provider adapter does
// (a RateLimits method, as the providers have). Windows start on multiples of Window.
type Windowed struct {
	Quota  int
	Window time.Duration

	mu      sync.Mutex
	start   time.Time
	used    int
	ok, too int
	limits  llmhttp.RateLimitTracker
}

// Counts returns the calls it served and those it answered 429.
func (p *Windowed) Counts() (ok, limited int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ok, p.too
}

// Invoke serves a call within the window's quota, else answers 429.
func (p *Windowed) Invoke(context.Context, any, ...core.Option) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.start.IsZero() || now.Sub(p.start) >= p.Window {
		p.start, p.used = now.Truncate(p.Window), 0
	}
	admitted := p.used < p.Quota
	if admitted {
		p.used++
		p.ok++
	} else {
		p.too++
	}
	p.limits.Observe(&http.Response{Header: http.Header{
		"X-Ratelimit-Limit-Requests":     {strconv.Itoa(p.Quota)},
		"X-Ratelimit-Remaining-Requests": {strconv.Itoa(p.Quota - p.used)},
		"X-Ratelimit-Reset-Requests":     {p.start.Add(p.Window).Sub(now).String()},
	}})
	if !admitted {
		return nil, &HTTPError{Code: 429}
	}
	return "ok", nil
}

// Batch invokes each item.
func (p *Windowed) Batch(ctx context.Context, in []any, o ...core.Option) ([]any, error) {
	return core.RunnableFunc(p.Invoke).Batch(ctx, in, o...)
}

// Stream yields Invoke's answer.
func (p *Windowed) Stream(ctx context.Context, in any, o ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(p.Invoke).Stream(ctx, in, o...)
}

// RateLimits says what the last window allows.
func (p *Windowed) RateLimits() (llmhttp.RateLimits, bool) { return p.limits.RateLimits() }

// Unlimited is p without its headers: a provider whose limits are
// learned only from its 429s.
func (p *Windowed) Unlimited() core.Runnable { return core.RunnableFunc(p.Invoke) }

package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// fixedWindow is a provider whose window of limit requests opens at the
// first call after the last window expired and lasts span, and that says
// so in x-ratelimit-* headers the way Groq does (the reset in seconds,
// to the hundredth, rounded to the nearest), with a Retry-After on a 429.
type fixedWindow struct {
	limit int
	span  time.Duration

	mu                sync.Mutex
	start             time.Time // the window's; zero before the first call
	used              int
	windows, ok, over int
}

func (p *fixedWindow) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	now := time.Now()
	if p.start.IsZero() || !now.Before(p.start.Add(p.span)) {
		p.start, p.used = now, 0
		p.windows++
	}
	p.used++
	allowed := p.used <= p.limit
	if allowed {
		p.ok++
	} else {
		p.over++
	}
	left := p.start.Add(p.span).Sub(now)
	remaining := max(p.limit-p.used, 0)
	p.mu.Unlock()
	h := w.Header()
	h.Set("x-ratelimit-limit-requests", fmt.Sprint(p.limit))
	h.Set("x-ratelimit-remaining-requests", fmt.Sprint(remaining))
	h.Set("x-ratelimit-reset-requests", fmt.Sprintf("%.2fs", math.Round(left.Seconds()*100)/100))
	if !allowed {
		h.Set("retry-after", fmt.Sprint(int(math.Ceil(left.Seconds()))))
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`)
		return
	}
	time.Sleep(time.Millisecond) // the model's answer
	_, _ = io.WriteString(w, `{"ok":true}`)
}

func (p *fixedWindow) counts() (windows, ok, over int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.windows, p.ok, p.over
}

// httpAdapter is a provider adapter over net/http, as a user writes one
// with llmhttp: it reads every answer's rate-limit headers.
type httpAdapter struct {
	core.RunnableFunc
	limits *llmhttp.RateLimitTracker
}

func (a httpAdapter) RateLimits() (llmhttp.RateLimits, bool) { return a.limits.RateLimits() }

func newHTTPAdapter(client *http.Client, url string) httpAdapter {
	a := httpAdapter{limits: new(llmhttp.RateLimitTracker)}
	a.RunnableFunc = func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		a.limits.Observe(resp)
		if resp.StatusCode >= 400 {
			return nil, llmhttp.Classify(&llmhttp.APIError{Status: resp.StatusCode, Err: errors.New(string(body))}, resp.Header, string(body))
		}
		return string(body), nil
	}
	return a
}

// The fixed-window edge, in real time over HTTP: a provider whose window
// of 4 requests per 400 ms opens at its first call after the last one
// expired, four concurrent callers, 64 calls through
// retry(ratelimit(adapter)). The first answers of a new window come back
// while that window's other calls are on their way; paced by the headers,
// no call beyond the limit goes: at most one 429 in 16 windows.
func TestAFixedWindowThatStartsAtItsFirstCallIsNotOverrun(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: about 7 s")
	}
	provider := &fixedWindow{limit: 4, span: 400 * time.Millisecond}
	srv := httptest.NewServer(provider)
	defer srv.Close()
	adapter := newHTTPAdapter(srv.Client(), srv.URL)
	limited, err := ratelimit.New(adapter, ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1)),
		ratelimit.WithMaxWait(5*time.Second), ratelimit.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := retry.New(limited, retry.RetryConfig{MaxRetries: 10, InitialBackoff: 10 * time.Millisecond, MaxBackoff: time.Second},
		retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	const callers, calls = 4, 64
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for c := range callers {
		wg.Go(func() {
			for range calls / callers {
				if _, err := r.Invoke(t.Context(), c); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a call failed: %v", err)
	}
	windows, ok, over := provider.counts()
	if os.Getenv("STEADFAST_EDGE_VERBOSE") != "" {
		t.Logf("%d calls served, %d 429s, in %d windows", ok, over, windows)
	}
	if ok != calls || over*16 > windows {
		t.Errorf("%d calls served, %d 429s in %d windows; want %d served and at most one 429 in 16 windows", ok, over, windows, calls)
	}
}

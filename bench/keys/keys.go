// Package keys is the two-keys scenario of bench/README.md: one provider,
// two API keys, each allowed a quota of requests per window (a compressed
// minute), which the provider reports in OpenAI's x-ratelimit headers on
// every answer and enforces with 429s. The calls go through the real
// openai-go client (providers/openai) to an HTTP server, through a pool
// of the two keys behind a retry layer: reacting to 429s alone, or pacing
// by the headers before them. A key may be revoked mid-run (401).
package keys

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3/option"
	mnoop "go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"
	xrate "golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// Scenario is the provider's quota, the load and the run.
type Scenario struct {
	Quota   int           // requests a key may make per window
	Window  time.Duration // the quota's window
	Load    float64       // calls offered, as a multiple of one key's quota
	Latency time.Duration // an answer's time
	Run     time.Duration // how long calls are offered
	// Shared is the share of the first key's quota that other traffic
	// (another service on the same key) uses, evenly over each window:
	// only the headers show it before a 429 does.
	Shared float64
	// RevokeAt, when positive, is when the second key is revoked: from
	// then on it answers 401 invalid_api_key.
	RevokeAt time.Duration
	Seed     uint64
}

// Default is the committed scenario: two keys of 50 requests a second,
// 65 calls a second offered (1.3× one key's quota), for 20 s, while
// another service uses half of the first key's quota.
var Default = Scenario{Quota: 50, Window: time.Second, Load: 1.3, Latency: 20 * time.Millisecond, Run: 20 * time.Second, Shared: 0.5, Seed: 1}

// Variant is one way to call the two keys.
type Variant struct {
	Name string
	// Paced lets the pool read the keys' rate-limit headers; without it
	// the pool learns of a key's limit from its 429s only.
	Paced bool
	// RoundRobin sends the calls to the keys by turns, with no pool: what
	// a client without one does.
	RoundRobin bool
	// OneKey sends every call to the first key, through a ratelimit
	// decorator when Paced (it holds the calls beyond what the headers
	// say is left until the reset, up to 5 s).
	OneKey bool
}

// Variants are the ways compared.
var Variants = []Variant{
	{Name: "pool, reacting to 429s"},
	{Name: "pool, paced by the headers", Paced: true},
	{Name: "round-robin over the keys", RoundRobin: true},
}

// Result is what one variant met.
type Result struct {
	Variant
	Calls, Succeeded  int
	Retries           int64
	Requests, Limited [2]int64 // per key: requests, and those answered 429
	Revoked           int64    // requests answered 401
	Mean              time.Duration
}

// Success is the share of calls that succeeded.
func (r *Result) Success() float64 { return float64(r.Succeeded) / float64(max(r.Calls, 1)) }

// Throughput is the calls that succeeded per second of the run.
func (r *Result) Throughput(sc Scenario) float64 { return float64(r.Succeeded) / sc.Run.Seconds() }

// TooMany is the 429s of both keys.
func (r *Result) TooMany() int64 { return r.Limited[0] + r.Limited[1] }

func (r *Result) String() string {
	return fmt.Sprintf("%s\t%.2f %%\t%d\t%d\t%d\t%d\t%v", r.Name, 100*r.Success(), r.TooMany(), r.Revoked, r.Retries,
		r.Requests[0]+r.Requests[1], r.Mean.Round(time.Millisecond))
}

// Run offers sc's load through v and returns what it met.
func Run(ctx context.Context, sc Scenario, v Variant) (*Result, error) {
	p := &provider{sc: sc, start: time.Now()}
	srv := httptest.NewServer(p)
	defer srv.Close()
	var keys [2]core.Runnable
	for i := range keys {
		chat := openai.NewChat("gpt-test", option.WithBaseURL(srv.URL+"/"), option.WithAPIKey(fmt.Sprintf("key-%d", i+1)),
			option.WithHTTPClient(srv.Client()))
		keys[i] = chat
		if !v.Paced {
			keys[i] = unpaced{chat}
		}
	}
	var inner core.Runnable
	if v.OneKey {
		inner = keys[0]
		if v.Paced {
			rl, err := ratelimit.New(keys[0], ratelimit.InProcess(xrate.NewLimiter(xrate.Inf, 1)), ratelimit.WithMaxWait(5*time.Second),
				ratelimit.WithMeterProvider(mnoop.NewMeterProvider()))
			if err != nil {
				return nil, err
			}
			inner = rl
		}
	} else if v.RoundRobin {
		inner = &roundRobin{keys: keys[:]}
	} else {
		pl, err := pool.New([]pool.Deployment{{Name: "key-1", Runnable: keys[0]}, {Name: "key-2", Runnable: keys[1]}},
			pool.WithMeterProvider(mnoop.NewMeterProvider()))
		if err != nil {
			return nil, err
		}
		inner = pl
	}
	res := &Result{Variant: v}
	var retries atomic.Int64
	r, err := retry.New(inner, retry.RetryConfig{MaxRetries: 3, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 2 * time.Second, Jitter: 0.2},
		retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(mnoop.NewMeterProvider()),
		retry.WithOnRetry(func(context.Context, retry.RetryEvent) { retries.Add(1) }))
	if err != nil {
		return nil, err
	}

	rng := rand.New(rand.NewPCG(sc.Seed, 0x6b657973))
	rate := sc.Load * float64(sc.Quota) / sc.Window.Seconds()
	var (
		wg        sync.WaitGroup
		succeeded atomic.Int64
		total     atomic.Int64
	)
	start := time.Now()
	for at := time.Duration(0); ; {
		at += time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
		if at >= sc.Run {
			break
		}
		if d := time.Until(start.Add(at)); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		res.Calls++
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			began := time.Now()
			if _, err := r.Invoke(cctx, "summarise"); err == nil {
				succeeded.Add(1)
			}
			total.Add(int64(time.Since(began)))
		})
	}
	wg.Wait()
	res.Succeeded, res.Retries = int(succeeded.Load()), retries.Load()
	res.Mean = time.Duration(total.Load() / int64(max(res.Calls, 1)))
	for i := range res.Requests {
		res.Requests[i], res.Limited[i] = p.requests[i].Load(), p.limited[i].Load()
	}
	res.Revoked = p.revoked.Load()
	return res, ctx.Err()
}

// unpaced hides a key's rate-limit headers from the pool: it learns of
// the limit from the 429s alone.
type unpaced struct{ core.Runnable }

// roundRobin sends each call to the next key.
type roundRobin struct {
	keys []core.Runnable
	next atomic.Uint64
}

func (r *roundRobin) Invoke(ctx context.Context, in any, opts ...core.Option) (any, error) {
	return r.keys[(r.next.Add(1)-1)%uint64(len(r.keys))].Invoke(ctx, in, opts...)
}

func (r *roundRobin) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(r.Invoke).Batch(ctx, in, opts...)
}

func (r *roundRobin) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return r.keys[(r.next.Add(1)-1)%uint64(len(r.keys))].Stream(ctx, in, opts...)
}

// provider is the simulated API: per key, a quota of requests per window
// (windows aligned on the run's start), reported on every answer.
type provider struct {
	sc       Scenario
	start    time.Time
	mu       sync.Mutex
	window   [2]int64 // the window each key's count is of
	used     [2]int
	requests [2]atomic.Int64
	limited  [2]atomic.Int64
	revoked  atomic.Int64
}

func (p *provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	key := 0
	if strings.HasSuffix(r.Header.Get("Authorization"), "key-2") {
		key = 1
	}
	p.requests[key].Add(1)
	now := time.Since(p.start)
	w.Header().Set("Content-Type", "application/json")
	if key == 1 && p.sc.RevokeAt > 0 && now >= p.sc.RevokeAt {
		p.revoked.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}`)
		return
	}
	win := int64(now / p.sc.Window)
	into := now % p.sc.Window
	reset := p.sc.Window - into
	others := 0 // the other traffic's requests so far in this window
	if key == 0 {
		others = int(p.sc.Shared * float64(p.sc.Quota) * into.Seconds() / p.sc.Window.Seconds())
	}
	p.mu.Lock()
	if p.window[key] != win {
		p.window[key], p.used[key] = win, 0
	}
	allowed := p.used[key]+others < p.sc.Quota
	if allowed {
		p.used[key]++
	}
	remaining := max(p.sc.Quota-p.used[key]-others, 0)
	p.mu.Unlock()
	h := w.Header()
	h.Set("x-ratelimit-limit-requests", fmt.Sprint(p.sc.Quota))
	h.Set("x-ratelimit-remaining-requests", fmt.Sprint(remaining))
	h.Set("x-ratelimit-reset-requests", reset.Round(time.Millisecond).String())
	if !allowed {
		p.limited[key].Add(1)
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"error":{"message":"Rate limit reached for gpt-test on requests per min (RPM): Limit %d, Used %d, Requested 1. Please try again in %v.","type":"requests","code":"rate_limit_exceeded"}}`,
			p.sc.Quota, p.sc.Quota, reset.Round(time.Millisecond))
		return
	}
	time.Sleep(p.sc.Latency)
	_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"summary"}}]}`)
}

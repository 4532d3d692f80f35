package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// hidden is a provider with a capacity it does not say: a call beyond
// capacity calls in flight is answered 429 at once; the others after
// service. It counts what it answered and the most calls it had at once.
type hidden struct {
	mu                 sync.Mutex
	capacity, inflight int
	peak, ok, limited  int
	service            time.Duration
	reject             time.Duration // how long a 429 takes
	retryAfter         time.Duration
}

func (p *hidden) enter() (over bool, leave func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight++
	p.peak = max(p.peak, p.inflight)
	if p.inflight > p.capacity {
		p.limited++
		p.inflight--
		return true, func() {}
	}
	return false, func() {
		p.mu.Lock()
		p.inflight--
		p.mu.Unlock()
	}
}

func (p *hidden) Invoke(ctx context.Context, _ any, _ ...core.Option) (any, error) {
	over, leave := p.enter()
	defer leave()
	if over {
		time.Sleep(p.reject)
		return nil, &mock.HTTPError{Code: 429, After: p.retryAfter}
	}
	select {
	case <-time.After(p.service):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	p.ok++
	p.mu.Unlock()
	return "ok", nil
}

func (p *hidden) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(p.Invoke).Batch(ctx, in, opts...)
}

func (p *hidden) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return streamOf(p.Invoke(ctx, in, opts...))
}

// streamOf is an Invoke's answer as a stream of one chunk.
func streamOf(out any, err error) (<-chan any, error) {
	if err != nil {
		return nil, err
	}
	ch := make(chan any, 1)
	ch <- out
	close(ch)
	return ch, nil
}

func (p *hidden) counts() (peak, ok, limited int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak, p.ok, p.limited
}

func newConcurrency(t *testing.T, inner core.Runnable, c ratelimit.ConcurrencyConfig) *ratelimit.Concurrency {
	t.Helper()
	r, err := ratelimit.NewConcurrency(inner, c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestConcurrencyConfigErrors(t *testing.T) {
	ok := mock.New()
	for _, tc := range []struct {
		c    ratelimit.ConcurrencyConfig
		want string
	}{
		{ratelimit.ConcurrencyConfig{Min: 10, Max: 5}, "Min is 10, above Max 5"},
		{ratelimit.ConcurrencyConfig{Min: -1}, "Min is -1"},
		{ratelimit.ConcurrencyConfig{Max: -2}, "Max is -2"},
		{ratelimit.ConcurrencyConfig{Initial: -3}, "Initial is -3"},
		{ratelimit.ConcurrencyConfig{Initial: 50, Max: 10}, "Initial is 50, outside Min 1 and Max 10"},
		{ratelimit.ConcurrencyConfig{MaxStarvation: -time.Second}, "MaxStarvation is -1s"},
		{ratelimit.ConcurrencyConfig{MaxWait: -time.Second}, "MaxWait is -1s"},
	} {
		if _, err := ratelimit.NewConcurrency(ok, tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewConcurrency(%+v) error = %v, want one saying %q", tc.c, err, tc.want)
		}
	}
	if _, err := ratelimit.NewConcurrency(nil, ratelimit.ConcurrencyConfig{}); err == nil || !strings.Contains(err.Error(), "nil") {
		t.Errorf("NewConcurrency(nil) error = %v, want one naming the nil Runnable", err)
	}
	defer func() {
		if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "above Max") {
			t.Errorf("ConcurrencyMiddleware with Min > Max: recovered %v, want a panic naming it", v)
		}
	}()
	ratelimit.ConcurrencyMiddleware(ratelimit.ConcurrencyConfig{Min: 3, Max: 2})
}

// invokeAll makes n concurrent calls through r, each with ctx, and
// returns their errors.
func invokeAll(ctx context.Context, r core.Runnable, n int) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = r.Invoke(ctx, i) })
	}
	wg.Wait()
	return errs
}

// A fixed limit (Min = Max) holds the calls in flight to it; the others
// wait their turn and all succeed.
func TestTheLimitBoundsTheCallsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &hidden{capacity: 100, service: time.Second}
		r := newConcurrency(t, p, ratelimit.ConcurrencyConfig{Min: 2, Max: 2})
		start := time.Now()
		for _, err := range invokeAll(t.Context(), r, 6) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if peak, ok, _ := p.counts(); peak != 2 || ok != 6 || time.Since(start) != 3*time.Second {
			t.Errorf("peak %d, %d answers in %v; want 2 at once, 6 answers in 3s", peak, ok, time.Since(start))
		}
	})
}

// limitOf reads the ratelimit.concurrency.limit gauge.
func limitOf(t *testing.T, reader *sdkmetric.ManualReader) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if g, ok := m.Data.(metricdata.Gauge[int64]); ok && m.Name == "ratelimit.concurrency.limit" {
				return g.DataPoints[0].Value
			}
		}
	}
	t.Fatal("no ratelimit.concurrency.limit gauge")
	return 0
}

// shedOf reads the ratelimit.shed counter, by priority.
func shedOf(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "ratelimit.shed" {
				for _, dp := range s.DataPoints {
					v, _ := dp.Attributes.Value("ratelimit.priority")
					out[v.AsString()] += dp.Value
				}
			}
		}
	}
	return out
}

// Clients that keep a provider busy find its hidden capacity: the limit
// settles near it, the provider is kept busy, and its 429s are few; when
// the capacity falls to a quarter, and rises back, the limit follows.
func TestTheLimitFindsAHiddenCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &hidden{capacity: 20, service: time.Second}
		reader := sdkmetric.NewManualReader()
		r := newConcurrency(t, p, ratelimit.ConcurrencyConfig{Initial: 4, Max: 200,
			MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for range 60 { // more clients than the provider can serve
			wg.Go(func() {
				for ctx.Err() == nil {
					if _, err := r.Invoke(ctx, "q"); err != nil {
						time.Sleep(100 * time.Millisecond) // a client's own pause after a failure
					}
				}
			})
		}
		phase := func(name string, capacity int, d time.Duration) {
			p.mu.Lock()
			p.capacity = capacity
			p.mu.Unlock()
			time.Sleep(10 * time.Second) // the limit's time to follow
			_, ok0, lim0 := p.counts()
			time.Sleep(d)
			_, ok1, lim1 := p.counts()
			goodput := float64(ok1-ok0) / d.Seconds() / float64(capacity)
			share := float64(lim1-lim0) / float64(ok1-ok0+lim1-lim0)
			limit := limitOf(t, reader)
			t.Logf("%s: capacity %d, limit %d, goodput %.0f%% of it, 429s %.1f%%", name, capacity, limit, 100*goodput, 100*share)
			if goodput < 0.9 || share > 0.06 || limit < int64(capacity)/2 || limit > 2*int64(capacity) {
				t.Errorf("%s: limit %d, goodput %.0f%%, 429s %.1f%% of requests; want near %d, >= 90%%, <= 6%%",
					name, limit, 100*goodput, 100*share, capacity)
			}
		}
		phase("start", 20, 30*time.Second)
		phase("down x4", 5, 30*time.Second)
		phase("up x4", 20, 30*time.Second)
		cancel()
		wg.Wait()
	})
}

// An overload's Retry-After cuts the limit further than a bare 429.
func TestALongerRetryAfterCutsMore(t *testing.T) {
	for _, tc := range []struct {
		after time.Duration
		want  int64
	}{{0, 11}, {8 * time.Second, 2}} {
		synctest.Test(t, func(t *testing.T) {
			p := &hidden{capacity: 0, retryAfter: tc.after, reject: 100 * time.Millisecond}
			reader := sdkmetric.NewManualReader()
			r := newConcurrency(t, p, ratelimit.ConcurrencyConfig{Initial: 16,
				MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
			invokeAll(t.Context(), r, 16) // 16 429s of calls in flight together: one cut
			if got := limitOf(t, reader); got != tc.want {
				t.Errorf("Retry-After %v: limit %d after a burst of 429s, want %d", tc.after, got, tc.want)
			}
		})
	}
}

// blocking is a provider whose calls wait until released, and which
// records the order in which they came.
type blocking struct {
	mu      sync.Mutex
	order   []any
	release chan struct{}
}

func (b *blocking) Invoke(ctx context.Context, in any, _ ...core.Option) (any, error) {
	b.mu.Lock()
	b.order = append(b.order, in)
	b.mu.Unlock()
	select {
	case <-b.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return in, nil
}
func (b *blocking) Batch(context.Context, []any, ...core.Option) ([]any, error) { return nil, nil }
func (b *blocking) Stream(context.Context, any, ...core.Option) (<-chan any, error) {
	return nil, errors.New("no streams")
}

// Under saturation a higher class goes first: calls that came as batch,
// batch, standard, interactive go interactive, standard, batch, batch.
func TestAHigherClassGoesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &blocking{release: make(chan struct{})}
		r := newConcurrency(t, b, ratelimit.ConcurrencyConfig{Min: 1, Max: 1})
		var wg sync.WaitGroup
		call := func(name string, p ratelimit.Priority) {
			wg.Go(func() { _, _ = r.Invoke(ratelimit.WithPriority(t.Context(), p), name) })
			synctest.Wait() // in the queue before the next comes
		}
		call("holder", ratelimit.Standard)
		call("batch 1", ratelimit.Batch)
		call("batch 2", ratelimit.Batch)
		call("standard", ratelimit.Standard)
		call("interactive", ratelimit.Interactive)
		for range 5 {
			b.release <- struct{}{}
			synctest.Wait()
		}
		wg.Wait()
		if want := []any{"holder", "interactive", "standard", "batch 1", "batch 2"}; !slices.Equal(b.order, want) {
			t.Errorf("order %v, want %v", b.order, want)
		}
	})
}

// Interactive calls that keep the limit saturated never starve a batch
// call: it ages a class per half of MaxStarvation and goes within it.
func TestNoClassStarves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &hidden{capacity: 100, service: time.Second}
		r := newConcurrency(t, p, ratelimit.ConcurrencyConfig{Min: 2, Max: 2, MaxStarvation: 8 * time.Second})
		ctx, cancel := context.WithCancel(t.Context())
		interactive := ratelimit.WithPriority(ctx, ratelimit.Interactive)
		var wg sync.WaitGroup
		for range 6 { // three times the limit, each calling again at once
			wg.Go(func() {
				for ctx.Err() == nil {
					_, _ = r.Invoke(interactive, "q")
				}
			})
		}
		time.Sleep(3 * time.Second)
		start := time.Now()
		if _, err := r.Invoke(ratelimit.WithPriority(ctx, ratelimit.Batch), "batch"); err != nil {
			t.Fatal(err)
		}
		waited := time.Since(start) - time.Second // less its own answer's time
		cancel()
		wg.Wait()
		if waited > 8*time.Second {
			t.Errorf("the batch call waited %v, want at most MaxStarvation 8s", waited)
		}
		if waited < 2*time.Second {
			t.Errorf("the batch call waited %v: it went before interactive calls that came first", waited)
		}
	})
}

// A call that cannot expect a permit within its deadline (or MaxWait) is
// refused at once, and counted as shed by its class; one that can waits.
func TestAWaitPastTheDeadlineIsRefusedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &hidden{capacity: 100, service: 10 * time.Second}
		reader := sdkmetric.NewManualReader()
		r := newConcurrency(t, p, ratelimit.ConcurrencyConfig{Min: 1, Max: 1,
			MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		invokeAll(t.Context(), r, 2) // 20 s: the rate of answers is known
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = r.Invoke(t.Context(), "holder") })
		synctest.Wait()
		ctx, cancel := context.WithTimeout(ratelimit.WithPriority(t.Context(), ratelimit.Batch), time.Second)
		defer cancel()
		start := time.Now()
		_, err := r.Invoke(ctx, "late")
		var le *ratelimit.LimitedError
		if !errors.As(err, &le) || !le.Deadline || time.Since(start) != 0 {
			t.Errorf("Invoke() = %v after %v, want a *LimitedError of the deadline at once", err, time.Since(start))
		}
		if got := shedOf(t, reader); got["batch"] != 1 {
			t.Errorf("ratelimit.shed = %v, want 1 batch call", got)
		}
		wg.Wait()
	})
}

// Cost weighs a permit: the limit counts the cost in flight.
func TestCostWeighsAPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &hidden{capacity: 100, service: time.Second}
		r := newConcurrency(t, p, ratelimit.ConcurrencyConfig{Min: 8, Max: 8, Cost: func(in any) int { return in.(int) }})
		start := time.Now()
		var wg sync.WaitGroup
		for _, cost := range []int{5, 5, 3} {
			wg.Go(func() { _, _ = r.Invoke(t.Context(), cost) })
		}
		wg.Wait()
		if peak, _, _ := p.counts(); peak != 2 || time.Since(start) != 2*time.Second {
			t.Errorf("peak %d in %v, want 2 at once (5+3), the other after, in 2s", peak, time.Since(start))
		}
		if _, err := r.Invoke(t.Context(), 9); err == nil || !errors.Is(err, ratelimit.ErrLimited) || retry.IsRetryable(err) {
			t.Errorf("a call costing 9 under a limit of at most 8: %v, want a permanent ErrLimited", err)
		}
		if _, err := r.Invoke(t.Context(), -1); err == nil || retry.IsRetryable(err) {
			t.Errorf("a negative cost: %v, want a permanent error", err)
		}
	})
}

// A stream holds its permit until it ends; a consumer that cancels gives
// it back.
func TestAStreamHoldsItsPermitUntilItEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Result{Chunks: []any{1, 2, 3}, ChunkDelay: time.Second})
		r := newConcurrency(t, inner, ratelimit.ConcurrencyConfig{Min: 1, Max: 1})
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := r.Stream(ctx, "q")
		if err != nil {
			t.Fatal(err)
		}
		<-ch
		second := make(chan time.Time)
		go func() {
			ch2, err := r.Stream(t.Context(), "q")
			if err == nil {
				mock.Drain(ch2)
			}
			second <- time.Now()
		}()
		start := time.Now()
		time.Sleep(5 * time.Second)
		cancel() // the first consumer goes: its permit is the second's
		for range ch {
		}
		if done := <-second; done.Sub(start) != 7*time.Second {
			t.Errorf("the second stream ended %v after the first's consumer came, want 7s (5s, then its own 2s)", done.Sub(start))
		}
	})
}

// Retry over the limit over a provider of hidden capacity: the 429s cut
// the limit, the retry layer retries them, every call succeeds.
func TestRetryOverConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &hidden{capacity: 4, service: time.Second}
		chain := core.Chain(p,
			retry.Middleware(retry.RetryConfig{MaxRetries: 10, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second}),
			ratelimit.ConcurrencyMiddleware(ratelimit.ConcurrencyConfig{Initial: 16}))
		for i, err := range invokeAll(t.Context(), chain, 32) {
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		if _, ok, limited := p.counts(); ok != 32 || limited > 16 {
			t.Errorf("%d answers, %d 429s; want 32, and at most the first burst's 429s", ok, limited)
		}
	})
}

// queueing is a self-hosted model that never answers 429: it serves
// slots streams at once, and each stream beyond them in flight adds a
// queue's wait to the time to every first chunk.
type queueing struct {
	mu       sync.Mutex
	slots    int
	inflight int
}

func (q *queueing) Invoke(context.Context, any, ...core.Option) (any, error) { return "ok", nil }
func (q *queueing) Batch(context.Context, []any, ...core.Option) ([]any, error) {
	return nil, nil
}

func (q *queueing) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	q.mu.Lock()
	q.inflight++
	queued := max(0, q.inflight-q.slots)
	q.mu.Unlock()
	ch := make(chan any)
	go func() {
		defer close(ch)
		defer func() {
			q.mu.Lock()
			q.inflight--
			q.mu.Unlock()
		}()
		wait := 100*time.Millisecond + time.Duration(queued)*200*time.Millisecond // to the first chunk
		for range 10 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return
			}
			select {
			case ch <- "token":
			case <-ctx.Done():
				return
			}
			wait = 50 * time.Millisecond
		}
	}()
	return ch, nil
}

// A provider that queues instead of refusing: the time to the first
// chunk keeps the limit near its slots, where total latency (or no
// signal at all) would let it grow to Max.
func TestTheFirstChunksTimeKeepsTheLimitNearAQueuingProvider(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &queueing{slots: 8}
		reader := sdkmetric.NewManualReader()
		r := newConcurrency(t, q, ratelimit.ConcurrencyConfig{Initial: 2, Max: 200,
			MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for range 40 {
			wg.Go(func() {
				for ctx.Err() == nil {
					if ch, err := r.Stream(ctx, "q"); err == nil {
						for range ch {
						}
					}
				}
			})
		}
		time.Sleep(2 * time.Minute)
		limit := limitOf(t, reader)
		cancel()
		wg.Wait()
		t.Logf("limit %d", limit)
		if limit < 6 || limit > 24 {
			t.Errorf("limit %d after 2 minutes, want near the provider's 8 slots (6 to 24)", limit)
		}
	})
}

// A Runnable that panics gives its permit back: the panic goes on, and
// the next call still gets the only permit.
func TestAPanicGivesThePermitBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		inner := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
			calls++
			if calls <= 2 {
				panic("boom")
			}
			return "ok", nil
		})
		r := newConcurrency(t, streamPanics{inner}, ratelimit.ConcurrencyConfig{Min: 1, Max: 1, MaxWait: time.Second})
		func() {
			defer func() {
				if v := recover(); v != "boom" {
					t.Errorf("Invoke recovered %v, want the panic", v)
				}
			}()
			_, _ = r.Invoke(t.Context(), "q")
		}()
		func() {
			defer func() {
				if v := recover(); v != "boom" {
					t.Errorf("Stream recovered %v, want the panic", v)
				}
			}()
			_, _ = r.Stream(t.Context(), "q")
		}()
		if out, err := r.Invoke(t.Context(), "q"); err != nil || out != "ok" {
			t.Errorf("after the panics: %v, %v; want ok, the permit given back", out, err)
		}
	})
}

// streamPanics is a Runnable whose Stream is its Invoke, so that it
// panics the same way.
type streamPanics struct{ core.RunnableFunc }

func (s streamPanics) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return streamOf(s.RunnableFunc(ctx, in, opts...))
}

// A call refused with nothing else in flight leaves no end to wait for:
// the next waits as long as the refusal took, twice that after the next,
// and so on, rather than meeting the same full provider at once; a clean
// answer ends the waits.
func TestALoneRefusalWaitsBeforeTheNextCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &hidden{capacity: 0, reject: 50 * time.Millisecond, service: time.Second}
		r := newConcurrency(t, p, ratelimit.ConcurrencyConfig{Initial: 1})
		start := time.Now()
		for _, err := range invokeAll(t.Context(), r, 5) {
			if err == nil {
				t.Fatal("a 429 answered nil")
			}
		}
		// refusals at 50 ms, then after waits of 50, 100, 200 and 400 ms
		if got := time.Since(start); got != time.Second {
			t.Errorf("5 refusals took %v; want 1s: 5 × 50 ms and waits of 50, 100, 200, 400 ms", got)
		}
		p.mu.Lock()
		p.capacity = 1
		p.mu.Unlock()
		time.Sleep(800 * time.Millisecond) // past the last wait
		start = time.Now()
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		p.mu.Lock()
		p.capacity = 0
		p.mu.Unlock()
		for _, err := range invokeAll(t.Context(), r, 2) {
			if err == nil {
				t.Fatal("a 429 answered nil")
			}
		}
		if got := time.Since(start); got != time.Second+150*time.Millisecond {
			t.Errorf("an answer and 2 refusals took %v; want 1.15s: the answer ended the waits, the first is 50 ms again", got)
		}
	})
}

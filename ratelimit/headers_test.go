package ratelimit_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// countingBackend admits every call at once, like a fleet Limiter with
// room, and counts them: header pacing does not depend on the backend.
type countingBackend struct{ n int }

func (b *countingBackend) Reserve(_ context.Context, n int, _ time.Duration) (core.Reservation, error) {
	b.n += n
	return core.Reservation{OK: true}, nil
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
			p := &mock.Windowed{Quota: 5, Window: time.Second}
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
			if ok, too := p.Counts(); too != 0 || ok != 23 || time.Since(start) < 4*time.Second {
				t.Errorf("%s: %d ok, %d 429s in %v; want 23 ok, none refused, over 4 windows", name, ok, too, time.Since(start))
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
			if _, too := p.Counts(); too != 0 || limited == 0 {
				t.Errorf("%s with WithMaxWait: %d 429s, %d refused here; want none at the provider, some here", name, too, limited)
			}
		})
	}

	synctest.Test(t, func(t *testing.T) {
		p := &mock.Windowed{Quota: 5, Window: time.Second}
		r, _ := ratelimit.New(p.Unlimited(), ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1)), ratelimit.WithMeterProvider(noop.NewMeterProvider()))
		for i := range 23 {
			_, _ = r.Invoke(t.Context(), i)
		}
		if _, too := p.Counts(); too == 0 {
			t.Errorf("without the headers: no 429s; the test does not show what the headers avoid")
		}
	})
}

// In the recommended chain, retry(ratelimit(breaker(provider))), the
// limiter finds the provider's limits through the breaker: no call meets
// a 429, and the breaker never opens.
func TestHeaderPacingThroughTheChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &mock.Windowed{Quota: 3, Window: time.Second}
		cb, err := breaker.New(p, gobreaker.Settings{Name: "llm"}, breaker.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		lim, err := ratelimit.New(cb, ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1)), ratelimit.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		r, err := retry.New(lim, retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Second},
			retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if _, err := r.Invoke(t.Context(), i); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		if ok, too := p.Counts(); ok != 10 || too != 0 {
			t.Errorf("%d served, %d 429s; want 10 and none", ok, too)
		}
	})
}

// Calls held for a reset all wake at it: each takes its turn again then,
// from the new window's room, so that many calls at once meet no 429.
func TestHeldCallsTakeTurnsAtTheReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &mock.Windowed{Quota: 5, Window: time.Second}
		r, err := ratelimit.New(p, ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1)), ratelimit.WithMeterProvider(noop.NewMeterProvider()),
			ratelimit.WithMaxWait(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Invoke(t.Context(), 0); err != nil { // learns the limits
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() { _, _ = r.Invoke(t.Context(), i) })
		}
		wg.Wait()
		// Before, the 16 held calls went together at each reset (11
		// 429s); and an answer that did not count the calls sent before
		// it, still on their way, set the counts back to zero (up to 6).
		if ok, too := p.Counts(); too != 0 || ok != 21 {
			t.Errorf("%d ok, %d 429s; want none refused: 5 calls a window", ok, too)
		}
	})
}

// A call waiting its turn in the bucket is counted against the headers
// when it goes, not before its wait: when the answers that came meanwhile
// say another client took the key's room (another replica of a fleet, on
// a shared bucket), it waits for the reset instead of going on what the
// headers said before.
func TestACallQueuedInTheBucketGoesOnTheLatestHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &mock.Windowed{Quota: 10, Window: time.Second}
		// The bucket allows more than the key does, one call each 100 ms.
		r, err := ratelimit.New(p, ratelimit.InProcess(rate.NewLimiter(10, 1)), ratelimit.WithMeterProvider(noop.NewMeterProvider()),
			ratelimit.WithMaxWait(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Invoke(t.Context(), 0); err != nil { // learns the limits: 9 left
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 5 { // queued in the bucket, 100 ms apart
			wg.Go(func() { _, _ = r.Invoke(t.Context(), i) })
		}
		time.Sleep(50 * time.Millisecond)
		for range 8 { // another client of the key: 1 left
			_, _ = p.Invoke(t.Context(), "other")
		}
		wg.Wait()
		// Before, the queued calls had been counted against the 9 left
		// before their wait, and four met a 429.
		if ok, too := p.Counts(); too != 0 || ok != 14 {
			t.Errorf("%d ok, %d 429s; want all 14 served, none refused", ok, too)
		}
	})
}

// sharedCount is a backend that also keeps a fleet's count against the
// headers (as the fleet module's Limiter does), scripted: it answers wait, or err.
type sharedCount struct {
	countingBackend
	mu    sync.Mutex
	wait  time.Duration
	err   error
	asked []llmhttp.RateLimits
}

func (s *sharedCount) ReserveHeaders(_ context.Context, l llmhttp.RateLimits, _ int) (core.Reservation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, l)
	return core.Reservation{Delay: s.wait, OK: s.wait == 0}, s.err
}

func (s *sharedCount) set(wait time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait, s.err = wait, err
}

func (s *sharedCount) last() (int, llmhttp.RateLimits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.asked), s.asked[len(s.asked)-1]
}

// With a backend that keeps the fleet's count against the headers, the
// fleet's count decides: it is given the last answer's limits, and a call
// it has no room for waits for the reset although this process's own
// count has room; while it fails, this process's count decides.
func TestTheFleetsCountDecidesWhileItAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &mock.Windowed{Quota: 5, Window: time.Second}
		shared := &sharedCount{}
		r, err := ratelimit.New(p, shared, ratelimit.WithMeterProvider(noop.NewMeterProvider()), ratelimit.WithMaxWait(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Invoke(t.Context(), 0); err != nil { // learns the limits: 4 left
			t.Fatal(err)
		}
		shared.set(500*time.Millisecond, nil) // the fleet used them
		start := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = r.Invoke(t.Context(), 1)
		}()
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		asked, limits := shared.last()
		if ok, _ := p.Counts(); ok != 1 || asked != 2 || limits.Requests.Remaining != 4 {
			t.Fatalf("%d served, the fleet's count asked %d times; want the second call held by it, asked twice (the first call's count too, before any answer), given the answer saying 4 left", ok, asked)
		}
		shared.set(0, errors.New("redis away")) // this process's count: 4 left
		<-done
		if ok, _ := p.Counts(); ok != 2 || time.Since(start) != 500*time.Millisecond {
			t.Errorf("%d served after %v, want the held call sent when the fleet's count failed, at its wait's end, 500ms", ok, time.Since(start))
		}
	})
}

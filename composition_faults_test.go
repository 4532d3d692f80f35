package steadfast_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
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
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

var quiet = []retry.Option{retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider())}

// recommended is the README's chain: retry(breaker(ratelimit(inner))). It
// returns the chain and the breaker, and counts the circuit's openings.
func recommended(t *testing.T, inner core.Runnable, cfg retry.RetryConfig, st gobreaker.Settings, lim *rate.Limiter, limOpts ...ratelimit.Option) (core.Runnable, *breaker.Runnable, *atomic.Int32) {
	t.Helper()
	opened := new(atomic.Int32)
	limited, err := ratelimit.New(inner, ratelimit.InProcess(lim), append(limOpts, ratelimit.WithMeterProvider(noop.NewMeterProvider()))...)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := breaker.New(limited, st, breaker.WithMeterProvider(noop.NewMeterProvider()),
		breaker.WithOnStateChange(func(_ string, _, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				opened.Add(1)
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	r, err := retry.New(cb, cfg, quiet...)
	if err != nil {
		t.Fatal(err)
	}
	return r, cb, opened
}

// The reproduction: a healthy provider behind a limiter below
// demand. The limiter's refusals are made on this side of the wire and
// must never open the circuit.
func TestThrottlingAloneNeverOpensTheCircuit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		healthy := mock.New()
		cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: 10 * time.Millisecond, MaxBackoff: time.Second}
		r, cb, opened := recommended(t, healthy, cfg, gobreaker.Settings{Name: "llm"}, rate.NewLimiter(1, 1))
		var ok, limited int
		for range 10 {
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			_, err := r.Invoke(ctx, "q")
			cancel()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, ratelimit.ErrLimited):
				limited++
			default:
				t.Errorf("Invoke() error = %v, want success or a limiter refusal", err)
			}
			if _, isOpen := errors.AsType[*breaker.OpenError](err); isOpen {
				t.Fatalf("Invoke() error = %v: the circuit opened on a healthy provider", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if ok != 1 || limited != 9 || healthy.CallCount() != 1 {
			t.Errorf("successes, refusals, provider calls = %d, %d, %d, want 1, 9, 1", ok, limited, healthy.CallCount())
		}
		if c := cb.Counts(); cb.State() != gobreaker.StateClosed || opened.Load() != 0 || c.TotalFailures != 0 {
			t.Errorf("circuit %v, opened %d times, counts %+v, want closed, never opened, no failure", cb.State(), opened.Load(), c)
		}
		time.Sleep(2 * time.Second)
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Errorf("Invoke() 2s later = %v, want success", err)
		}
	})
}

// A whole run of mixed Invoke, Batch and Stream callers, with random
// deadlines, against a healthy provider throttled by a fail-fast limiter
// well below demand: the circuit stays closed throughout, every failure is
// the limiter's or the caller's deadline, and streams deliver whole.
func TestThrottledHealthyProviderKeepsCircuitClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		healthy := mock.New(mock.Result{Value: "ok", Chunks: []any{"a", "b"}, Delay: 20 * time.Millisecond})
		cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Jitter: 0.5}
		st := gobreaker.Settings{Name: "llm", ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 3 }}
		r, cb, opened := recommended(t, healthy, cfg, st, rate.NewLimiter(20, 4), ratelimit.WithMaxWait(0))
		var wg sync.WaitGroup
		var calls, failures atomic.Int32
		for c := range 60 {
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			wg.Go(func() {
				for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
					ctx, cancel := context.WithTimeout(t.Context(), time.Duration(50+rng.IntN(400))*time.Millisecond)
					err := mixedCall(ctx, r, rng.IntN(3))
					cancel()
					calls.Add(1)
					if err != nil {
						failures.Add(1)
						if !errors.Is(err, ratelimit.ErrLimited) && !errors.Is(err, context.DeadlineExceeded) {
							t.Errorf("call error = %v, want only limiter refusals and deadlines", err)
						}
					}
					time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
				}
			})
		}
		wg.Wait()
		if failures.Load() == 0 || failures.Load() == calls.Load() {
			t.Errorf("%d of %d calls failed: the run did not throttle (or nothing passed)", failures.Load(), calls.Load())
		}
		if c := cb.Counts(); opened.Load() != 0 || cb.State() != gobreaker.StateClosed || c.TotalFailures != 0 {
			t.Errorf("circuit opened %d times, now %v, counts %+v: throttling a healthy provider must not open it", opened.Load(), cb.State(), c)
		}
	})
}

// mixedCall makes one Invoke, Batch or Stream call and checks its results.
func mixedCall(ctx context.Context, r core.Runnable, kind int) error {
	switch kind {
	case 0:
		_, err := r.Invoke(ctx, "q")
		return err
	case 1:
		outs, err := r.Batch(ctx, []any{1, 2})
		if err == nil && (len(outs) != 2 || outs[0] != "ok" || outs[1] != "ok") {
			return fmt.Errorf("batch outputs = %v", outs)
		}
		return err
	}
	ch, err := r.Stream(ctx, "q")
	if err != nil {
		return err
	}
	got := mock.Drain(ch)
	if len(got) == 1 {
		if err, isErr := got[0].(error); isErr {
			return err
		}
	}
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("stream values = %v", got)
	}
	return nil
}

// Under retry, every abandoned stream attempt (an error value before the
// first chunk, FirstChunkTimeout) is a failure the breaker counts: a
// streaming outage opens the circuit, and retrying then stops.
func TestStreamingOutageOpensTheCircuitUnderRetry(t *testing.T) {
	for name, outage := range map[string]mock.Result{
		"error value before first chunk": mock.Stream(&providerError{code: 503}),
		"no first chunk in time":         {Delay: time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				down := mock.New(outage)
				cfg := retry.RetryConfig{MaxRetries: 9, InitialBackoff: 10 * time.Millisecond, MaxBackoff: time.Second, FirstChunkTimeout: time.Second}
				st := gobreaker.Settings{Name: "llm", Timeout: time.Minute, ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 3 }}
				r, cb, opened := recommended(t, down, cfg, st, rate.NewLimiter(rate.Inf, 1))
				ch, err := r.Stream(t.Context(), "q")
				if err != nil {
					t.Fatal(err)
				}
				got := mock.Drain(ch)
				if len(got) != 1 || !errors.Is(got[0].(error), gobreaker.ErrOpenState) {
					t.Fatalf("values = %v, want one error: the circuit opened", got)
				}
				if opened.Load() != 1 || down.CallCount() != 3 || cb.State() != gobreaker.StateOpen {
					t.Errorf("opened %d times, provider calls %d, state %v, want 1, 3, open", opened.Load(), down.CallCount(), cb.State())
				}
			})
		})
	}
}

// panicking panics on its second call, after a 503 on its first.
type panicking struct{ calls atomic.Int32 }

func (p *panicking) Invoke(context.Context, any, ...core.Option) (any, error) {
	if p.calls.Add(1) == 2 {
		panic("provider bug")
	}
	return nil, &providerError{code: 503}
}
func (p *panicking) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(p.Invoke).Batch(ctx, in, opts...)
}
func (p *panicking) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(p.Invoke).Stream(ctx, in, opts...)
}

// A panic inside the recommended chain, on the caller's goroutine, reaches
// the caller unchanged through the limiter, the breaker and retry; the
// breaker counts it as a failure and its probe slot is not kept; the next
// call works.
func TestPanicThroughTheRecommendedChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &panicking{}
		cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: time.Second}
		r, cb, _ := recommended(t, inner, cfg, gobreaker.Settings{Name: "llm"}, rate.NewLimiter(rate.Inf, 1))
		func() {
			defer func() {
				if v := recover(); v != "provider bug" {
					t.Errorf("recovered %v, want the provider's panic unchanged", v)
				}
			}()
			_, _ = r.Invoke(t.Context(), "q")
		}()
		if c := cb.Counts(); c.TotalFailures != 2 {
			t.Errorf("breaker failures = %d, want 2: the 503 and the panic", c.TotalFailures)
		}
		_, err := r.Invoke(t.Context(), "q")
		re, ok := errors.AsType[*retry.Error](err)
		if !ok || re.Outcome != retry.OutcomeExhausted || re.Attempts != 4 || inner.calls.Load() != 6 {
			t.Errorf("next Invoke() error = %v after %d provider calls, want exhausted after 4 more attempts (6 calls)", err, inner.calls.Load())
		}
	})
}

package steadfast_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/hedge"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
)

// fallback(retry(breaker(ratelimit(a))), retry(breaker(ratelimit(b)))):
// while a is down each call's turn on it ends after one retry (a second
// 5xx in a row, with b to go to), its circuit opens on the third failure,
// in the second call, and from then on calls move to b at once, without
// reaching a or waiting a backoff.
func TestFallbackOverTheRecommendedChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := mock.New(mock.Fail(&providerError{code: 503})), mock.New(mock.OK("from b"))
		st := gobreaker.Settings{Name: "a", Timeout: time.Minute, ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 3 }}
		cfg := retryConfig(2)
		chainA, cbA, _ := recommended(t, a, cfg, st, rate.NewLimiter(rate.Inf, 1))
		st.Name = "b"
		chainB, _, _ := recommended(t, b, cfg, st, rate.NewLimiter(rate.Inf, 1))
		r, err := fallback.New([]core.Runnable{chainA, chainB}, fallback.WithTracerProvider(tnoop.NewTracerProvider()), fallback.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			start := time.Now()
			out, err := r.Invoke(t.Context(), "q")
			if err != nil || out != "from b" {
				t.Fatalf("call %d: Invoke() = %v, %v, want b's answer", i, out, err)
			}
			if i > 1 && time.Since(start) != 0 {
				t.Errorf("call %d took %v, want b at once: a's circuit is open", i, time.Since(start))
			}
		}
		if a.CallCount() != 3 || cbA.State() != gobreaker.StateOpen {
			t.Errorf("a: %d calls, circuit %v, want 3 and open", a.CallCount(), cbA.State())
		}
	})
}

// retry(hedge(model)) streams: each retry attempt is a hedged race to the
// first chunk. When both racers fail, the retry layer retries; when one is
// slow, the hedge wins; only the winner's chunks reach the consumer, and a
// consumer that cancels leaves nothing running.
func TestRetryAroundHedgedStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		down := &providerError{code: 503}
		model := mock.New(
			mock.Stream(down), mock.Stream(down), // retry attempt 1: the first fails, its hedge goes at once and fails too
			mock.Result{Chunks: []any{"slow1", "slow2"}, Delay: time.Second}, // attempt 2: slow...
			mock.Result{Chunks: []any{"fast1", "fast2"}},                     // ...and hedged after 100ms
		)
		h, err := hedge.New(model, hedge.Config{Delay: 100 * time.Millisecond, MaxHedges: 1},
			hedge.WithTracerProvider(tnoop.NewTracerProvider()), hedge.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		r := newRetryQuiet(t, h)
		start := time.Now()
		ch, err := r.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		got := mock.Drain(ch)
		if !slices.Equal(got, []any{"fast1", "fast2"}) || model.CallCount() != 4 {
			t.Errorf("values = %v after %d model calls, want [fast1 fast2] after 4", got, model.CallCount())
		}
		if took := time.Since(start); took != time.Second+100*time.Millisecond {
			t.Errorf("took %v, want 1.1s: a 1s backoff, then the hedge at 100ms", took)
		}
		ctx, cancel := context.WithCancel(t.Context())
		if ch, err = r.Stream(ctx, "q"); err != nil {
			t.Fatal(err)
		}
		cancel()
		for range ch {
		}
		synctest.Wait()
		for i, c := range model.Calls() {
			if c.Ctx.Err() == nil {
				t.Errorf("model call %d still live", i)
			}
		}
	})
}

func retryConfig(retries int) retry.RetryConfig {
	return retry.RetryConfig{MaxRetries: retries, InitialBackoff: time.Second, MaxBackoff: time.Minute}
}

func newRetryQuiet(t *testing.T, inner core.Runnable) core.Runnable {
	t.Helper()
	r, err := retry.New(inner, retryConfig(3), quiet...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// retry(fallback(pool(keys...), other)) when the keys' headers say none
// has room until the reset: by default the pool holds the call for the
// reset (no 429, no retry, no move); with pool.WithMaxWait(0) it refuses
// at once and the fallback moves to the other model, with no retry spent
// either way.
func TestFallbackOverAPoolWithNoRoomLeft(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []pool.Option
		want   string
		waited time.Duration
	}{
		{name: "default", want: "ok", waited: time.Second},
		{name: "WithMaxWait(0)", opts: []pool.Option{pool.WithMaxWait(0)}, want: "from other"},
	} {
		synctest.Test(t, func(t *testing.T) {
			key := &mock.Windowed{Quota: 2, Window: time.Second}
			p, err := pool.New([]pool.Deployment{{Name: "key", Runnable: key}}, append(tc.opts, pool.WithMeterProvider(noop.NewMeterProvider()))...)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the key's quota, used up
				if _, err := p.Invoke(t.Context(), "q"); err != nil {
					t.Fatal(err)
				}
			}
			other := mock.New(mock.OK("from other"))
			fb, err := fallback.New([]core.Runnable{p, other}, fallback.WithTracerProvider(tnoop.NewTracerProvider()), fallback.WithMeterProvider(noop.NewMeterProvider()))
			if err != nil {
				t.Fatal(err)
			}
			retries := 0
			r, err := retry.New(fb, retryConfig(3), retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()),
				retry.WithOnRetry(func(context.Context, retry.RetryEvent) { retries++ }))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out, err := r.Invoke(t.Context(), "q")
			if err != nil || out != tc.want || time.Since(start) != tc.waited || retries != 0 {
				t.Errorf("%s: Invoke() = %v, %v after %v and %d retries; want %v after %v, none", tc.name, out, err, time.Since(start), retries, tc.want, tc.waited)
			}
			if _, too := key.Counts(); too != 0 {
				t.Errorf("%s: %d 429s, want none", tc.name, too)
			}
		})
	}
}

package steadfast_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// usage is a stream's last chunk, or an answer, reporting its tokens.
type usage struct{ tokens int }

func usageOf(out any) int {
	if u, ok := out.(usage); ok {
		return u.tokens
	}
	return -1
}

// A tokens-per-minute bucket in the recommended chain, under faults: an
// attempt that fails keeps its estimate, the one that succeeds settles on
// its usage; a consumer that walks away leaves no goroutine behind and its
// estimate standing; a wait past the deadline ends the call without
// reaching the provider or counting against the circuit.
func TestTokenLimitThroughTheRecommendedChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(1, 2000) // slow enough that refills do not blur the counts
		tokens := func() int { return int(lim.TokensAt(time.Now())) }
		inner := mock.New(
			mock.Stream(&providerError{code: 503}),        // attempt 1: fails before its first chunk
			mock.Stream(nil, "hello", usage{tokens: 300}), // attempt 2: used 300
			// The next call, abandoned while its answer is still coming
			// (a stream that had ended, usage and all, is settled even if
			// its consumer then walks away: the provider counted it).
			mock.Result{Chunks: []any{"a", "b", usage{tokens: 100}}, ChunkDelay: time.Second})
		cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond}
		r, cb, _ := recommended(t, inner, cfg, gobreaker.Settings{Name: "llm"}, lim,
			ratelimit.WithCost(func(in any) int {
				if in == "long" {
					return 1900
				}
				return 500
			}), ratelimit.WithUsage(usageOf))

		ch, err := r.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		got := mock.Drain(ch)
		if len(got) != 2 || got[0] != "hello" {
			t.Fatalf("stream delivered %v, want the second attempt's two values", got)
		}
		// 2000 - 500 (attempt 1, failed) - 300 (attempt 2, settled).
		if n := tokens(); n != 1200 {
			t.Errorf("%v tokens after the stream, want 1200", n)
		}

		ctx, cancel := context.WithCancel(t.Context())
		ch, err = r.Stream(ctx, "q")
		if err != nil {
			t.Fatal(err)
		}
		<-ch
		cancel()
		synctest.Wait() // the forwarders have ended: synctest would report them otherwise
		if n := tokens(); n != 700 {
			t.Errorf("%v tokens after an abandoned stream, want 700: its estimate stands", n)
		}

		failures := cb.Counts().TotalFailures
		calls := inner.CallCount()
		dctx, dcancel := context.WithTimeout(t.Context(), time.Second)
		defer dcancel()
		_, err = r.Invoke(dctx, "long") // needs 1200 more tokens: 20 minutes
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ratelimit.ErrLimited) {
			t.Errorf("Invoke() error = %v, want a deadline refusal by the limiter", err)
		}
		if inner.CallCount() != calls || cb.Counts().TotalFailures != failures {
			t.Errorf("the refusal reached the provider (%d calls) or the circuit (%d failures)",
				inner.CallCount()-calls, cb.Counts().TotalFailures-failures)
		}
	})
}

// A usage function that panics on the caller's goroutine propagates
// through the chain unchanged, and the circuit's probe slot is freed.
func TestUsagePanicThroughTheRecommendedChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.OK(usage{tokens: 1}))
		r, cb, _ := recommended(t, inner, retry.DefaultRetryConfig(), gobreaker.Settings{Name: "llm"}, rate.NewLimiter(100, 1000),
			ratelimit.WithUsage(func(any) int { panic("usage bug") }))
		func() {
			defer func() {
				if v := recover(); v != "usage bug" {
					t.Errorf("recovered %v, want the usage function's panic", v)
				}
			}()
			_, _ = r.Invoke(t.Context(), "q")
		}()
		if cb.State() != gobreaker.StateClosed {
			t.Errorf("circuit %v after one panic, want closed", cb.State())
		}
	})
}

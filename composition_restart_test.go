package steadfast_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/metric/noop"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// restartChain is fallback over [retry(RestartStreams) over breaker over
// ratelimit over primary, retry over secondary].
func restartChain(t *testing.T, primary, secondary core.Runnable) (core.Runnable, *breaker.Runnable) {
	t.Helper()
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: time.Second, ChunkTimeout: 10 * time.Second, RestartStreams: true}
	limited, err := ratelimit.New(primary, ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1)), ratelimit.WithMeterProvider(noop.NewMeterProvider()))
	ok(t, err)
	cb, err := breaker.New(limited, gobreaker.Settings{Name: "primary", ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 2 }},
		breaker.WithMeterProvider(noop.NewMeterProvider()))
	ok(t, err)
	first, err := retry.New(cb, cfg, quiet...)
	ok(t, err)
	second, err := retry.New(secondary, cfg, quiet...)
	ok(t, err)
	f, err := fallback.New([]core.Runnable{first, second})
	ok(t, err)
	return f, cb
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// panicsAfterAChunk is a Runnable whose stream delivers a chunk and then panics
// on its producer's goroutine, which recovers it as the last value, as
// core.RunnableFunc's does.
type panicsAfterAChunk struct{ core.RunnableFunc }

func (panicsAfterAChunk) Stream(context.Context, any, ...core.Option) (<-chan any, error) {
	out := make(chan any, 2)
	go func() {
		defer close(out)
		defer func() {
			if v := recover(); v != nil {
				out <- &core.PanicError{Value: v}
			}
		}()
		out <- "p1"
		panic("boom")
	}()
	return out, nil
}

// runs splits a stream at its core.Resets; last is its error value.
func runs(ch <-chan any) (out [][]any, last error) {
	out = [][]any{nil}
	for v := range ch {
		switch v := v.(type) {
		case core.Reset:
			out = append(out, nil)
		case error:
			last = v
		default:
			out[len(out)-1] = append(out[len(out)-1], v)
		}
	}
	return out, last
}

// A primary whose streams break after their first chunk, behind a breaker
// that trips at the second failure: the retry layer restarts it once, the
// open circuit ends its turn, and the fallback restarts the answer on the
// secondary. One Reset per restart; the breaker counted both breaks.
func TestRestartsThroughBreakerAndRateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		primary := mock.New(mock.Stream(io.ErrUnexpectedEOF, "p1", "p2"))
		secondary := mock.New(mock.Stream(nil, "s1", "s2", "s3"))
		chain, cb := restartChain(t, primary, secondary)
		ch, err := chain.Stream(t.Context(), "q", core.WithResets())
		if err != nil {
			t.Fatal(err)
		}
		got, last := runs(ch)
		want := [][]any{{"p1", "p2"}, {"p1", "p2"}, {"s1", "s2", "s3"}}
		if last != nil || !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("runs %v, last %v; want %v", got, last, want)
		}
		if primary.CallCount() != 2 || secondary.CallCount() != 1 {
			t.Errorf("streams: primary %d, secondary %d; want 2 and 1", primary.CallCount(), secondary.CallCount())
		}
		if cb.State() != gobreaker.StateOpen {
			t.Errorf("breaker %v, want open after two breaks", cb.State())
		}
	})
}

// A panic in the primary's producer after its first chunk is a bug, not
// a route that failed: it is the stream's last value, and nothing
// restarts.
func TestAPanicAfterTheFirstChunkIsNotRestarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		primary := panicsAfterAChunk{}
		secondary := mock.New(mock.Stream(nil, "s1"))
		chain, _ := restartChain(t, primary, secondary)
		ch, err := chain.Stream(t.Context(), "q", core.WithResets())
		if err != nil {
			t.Fatal(err)
		}
		got, last := runs(ch)
		if len(got) != 1 || !errors.As(last, new(*core.PanicError)) || secondary.CallCount() != 0 {
			t.Errorf("runs %v, last %v, %d secondary streams; want no restart and the panic", got, last, secondary.CallCount())
		}
	})
}

// A restart whose backoff would outlast the caller's deadline is not
// made: the stream ends at once with the deadline outcome, with no Reset,
// and the fallback does not restart it elsewhere.
func TestADeadlineDuringARestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		primary := mock.New(mock.Stream(io.ErrUnexpectedEOF, "p1"), mock.Stream(nil, "p1", "p2"))
		secondary := mock.New(mock.Stream(nil, "s1"))
		chain, _ := restartChain(t, primary, secondary)
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		ch, err := chain.Stream(ctx, "q", core.WithResets())
		if err != nil {
			t.Fatal(err)
		}
		got, last := runs(ch)
		re, isRetry := errors.AsType[*retry.Error](last)
		if len(got) != 1 || !isRetry || re.Outcome != retry.OutcomeDeadline || secondary.CallCount() != 0 {
			t.Errorf("runs %v, last %v, %d secondary streams; want p1 and the deadline outcome", got, last, secondary.CallCount())
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("ended after %v, want at once: the backoff does not fit", took)
		}
	})
}

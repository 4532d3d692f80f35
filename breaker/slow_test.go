package breaker_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/mock"
)

// failuresOnly trips on 100 consecutive failures: in these tests, only
// the slow-call rate opens the circuit.
func failuresOnly() gobreaker.Settings {
	return gobreaker.Settings{Name: "llm", Timeout: 30 * time.Second,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 100 }}
}

// A brownout without errors: the primary's time to answer goes from
// 200 ms to 1 s (×5) at 10 s. With WithSlowCalls(500 ms, half, 10 calls,
// 10 s) the circuit opens within one window of it, and the fallback's
// next candidate serves every call from then on; before it, at 200 ms,
// the circuit stays closed (#73, item 4).
func TestABrownoutOpensTheCircuitAndTheFallbackServes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		brownout := start.Add(10 * time.Second)
		var primaryCalls atomic.Int64
		primary := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
			primaryCalls.Add(1)
			lat := 200 * time.Millisecond
			if !time.Now().Before(brownout) {
				lat = time.Second
			}
			time.Sleep(lat)
			return "primary", nil
		})
		backup := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
			time.Sleep(300 * time.Millisecond)
			return "backup", nil
		})
		var mu sync.Mutex
		var opened time.Time
		cb, err := breaker.New(primary, failuresOnly(), breaker.WithMeterProvider(noop.NewMeterProvider()),
			breaker.WithSlowCalls(500*time.Millisecond, 0.5, 10, 10*time.Second),
			breaker.WithOnStateChange(func(_ string, _, to gobreaker.State) {
				mu.Lock()
				defer mu.Unlock()
				if to == gobreaker.StateOpen && opened.IsZero() {
					opened = time.Now()
				}
			}))
		if err != nil {
			t.Fatal(err)
		}
		fb, err := fallback.New([]core.Runnable{cb, backup})
		if err != nil {
			t.Fatal(err)
		}
		type answer struct {
			at  time.Time
			out any
			err error
		}
		var answers []answer
		var wg sync.WaitGroup
		for end := start.Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			at := time.Now()
			wg.Go(func() {
				out, err := fb.Invoke(context.Background(), "q")
				mu.Lock()
				answers = append(answers, answer{at, out, err})
				mu.Unlock()
			})
		}
		wg.Wait()
		if opened.IsZero() || opened.Before(brownout) || opened.Sub(brownout) > 10*time.Second {
			t.Fatalf("the circuit opened at %v from the brownout, want within its first window (10 s)", opened.Sub(brownout))
		}
		for _, a := range answers {
			switch {
			case a.err != nil:
				t.Errorf("call at %v: %v, want an answer", a.at.Sub(start), a.err)
			case a.at.Before(brownout) && a.out != "primary":
				t.Errorf("call at %v before the brownout answered by %v, want the primary", a.at.Sub(start), a.out)
			case a.at.After(opened) && a.out != "backup":
				t.Errorf("call at %v, after the circuit opened, answered by %v, want the backup", a.at.Sub(start), a.out)
			}
		}
		t.Logf("opened %v after the brownout; %d calls, %d to the primary", opened.Sub(brownout), len(answers), primaryCalls.Load())
	})
}

// A stream is slow by its first chunk, never by its length: one whose
// first chunk takes 1 s counts as a failure of the circuit, one that
// starts at once and runs 10 s does not.
func TestAStreamIsSlowByItsFirstChunk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stream := func(first, rest time.Duration) core.Runnable {
			return mock.New(mock.Result{Chunks: []any{"a", "b"}, Delay: first, ChunkDelay: rest})
		}
		for _, tc := range []struct {
			name        string
			first, rest time.Duration
			failures    uint32
		}{
			{"late first chunk", time.Second, 0, 1},
			{"long answer", 0, 10 * time.Second, 0},
		} {
			cb, err := breaker.New(stream(tc.first, tc.rest), failuresOnly(), breaker.WithMeterProvider(noop.NewMeterProvider()),
				breaker.WithSlowCalls(500*time.Millisecond, 0.5, 10, time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			ch, err := cb.Stream(t.Context(), "q")
			if err != nil {
				t.Fatal(err)
			}
			var got []any
			for v := range ch {
				got = append(got, v)
			}
			if c := cb.Counts(); len(got) != 2 || c.TotalFailures != tc.failures || c.Requests != 1 {
				t.Errorf("%s: got %v, counts %+v; want both chunks, %d failure of 1", tc.name, got, c, tc.failures)
			}
		}
	})
}

func TestNewRejectsBadSlowCalls(t *testing.T) {
	ok := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	for _, o := range []breaker.Option{
		breaker.WithSlowCalls(0, 0.5, 10, time.Minute),
		breaker.WithSlowCalls(time.Second, 0, 10, time.Minute),
		breaker.WithSlowCalls(time.Second, 1.5, 10, time.Minute),
		breaker.WithSlowCalls(time.Second, math.NaN(), 10, time.Minute),
		breaker.WithSlowCalls(time.Second, 0.5, 0, time.Minute),
		breaker.WithSlowCalls(time.Second, 0.5, 10, 0),
	} {
		if _, err := breaker.New(ok, failuresOnly(), o); err == nil || !strings.Contains(err.Error(), "WithSlowCalls") {
			t.Errorf("New() error = %v, want one naming WithSlowCalls", err)
		}
	}
}

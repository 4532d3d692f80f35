package hedge_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/hedge"
	"github.com/steadfast-go/steadfast/internal/mock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newHedge(t *testing.T, inner core.Runnable, cfg hedge.Config, opts ...hedge.Option) *hedge.Runnable {
	t.Helper()
	opts = append([]hedge.Option{hedge.WithTracerProvider(tnoop.NewTracerProvider()), hedge.WithMeterProvider(noop.NewMeterProvider())}, opts...)
	r, err := hedge.New(inner, cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var errDown = &mock.HTTPError{Code: 503, Msg: "down"}

func TestSlowAttemptIsHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Result{Value: "slow", Delay: time.Second}, mock.Result{Value: "fast", Delay: 50 * time.Millisecond})
		r := newHedge(t, inner, hedge.Config{Delay: 100 * time.Millisecond, MaxHedges: 1})
		start := time.Now()
		out, err := r.Invoke(t.Context(), "q")
		if err != nil || out != "fast" {
			t.Fatalf("Invoke() = %v, %v, want the hedge's answer", out, err)
		}
		if got := time.Since(start); got != 150*time.Millisecond {
			t.Errorf("took %v, want 150ms (the 100ms delay, then the hedge's 50ms)", got)
		}
		synctest.Wait()
		if first := inner.Calls()[0].Ctx; !errors.Is(context.Cause(first), hedge.ErrLost) {
			t.Errorf("first attempt's cause = %v, want ErrLost: cancelled at once", context.Cause(first))
		}
	})
}

func TestFastAnswerSendsNoHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Result{Value: "ok", Delay: 50 * time.Millisecond})
		r := newHedge(t, inner, hedge.Config{Delay: 100 * time.Millisecond, MaxHedges: 2})
		if out, err := r.Invoke(t.Context(), "q"); err != nil || out != "ok" || inner.CallCount() != 1 {
			t.Errorf("Invoke() = %v, %v after %d calls, want ok after 1", out, err, inner.CallCount())
		}
	})
}

// A failure sends the next attempt at once, not after the delay; when
// every attempt fails, the last failure is the call's.
func TestFailureHedgesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Fail(errDown), mock.Result{Value: "ok", Delay: 10 * time.Millisecond})
		r := newHedge(t, inner, hedge.Config{Delay: time.Second, MaxHedges: 1})
		start := time.Now()
		if out, err := r.Invoke(t.Context(), "q"); err != nil || out != "ok" || time.Since(start) != 10*time.Millisecond {
			t.Errorf("Invoke() = %v, %v after %v, want ok after 10ms", out, err, time.Since(start))
		}
		all := mock.New(mock.Fail(errDown))
		r = newHedge(t, all, hedge.Config{Delay: time.Second, MaxHedges: 2})
		if _, err := r.Invoke(t.Context(), "q"); !errors.Is(err, errDown) || all.CallCount() != 3 {
			t.Errorf("Invoke() error = %v after %d calls, want the failure after 3", err, all.CallCount())
		}
	})
}

func TestNonIdempotentIsNeverHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Result{Value: "charged", Delay: time.Second})
		r := newHedge(t, mock.NonIdempotent(inner), hedge.Config{Delay: 10 * time.Millisecond, MaxHedges: 3})
		if out, err := r.Invoke(t.Context(), "q"); err != nil || out != "charged" || inner.CallCount() != 1 {
			t.Errorf("Invoke() = %v, %v after %d calls, want 1 call", out, err, inner.CallCount())
		}
		ch, err := r.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		for range ch {
		}
		if inner.CallCount() != 2 {
			t.Errorf("calls = %d after a Stream, want 2: one more, unhedged", inner.CallCount())
		}
	})
}

// refusing is a budget that refuses every retry, and so every hedge.
type refusing struct{}

func (refusing) Reserve(_ context.Context, n int, _ time.Duration) core.Reservation {
	if n <= 1 {
		return core.Reservation{OK: true}
	}
	return core.Reservation{}
}
func (refusing) RecordAttempt(context.Context, int, bool) {}

func TestBudgetIsAskedBeforeEachHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Result{Value: "slow", Delay: time.Second})
		r := newHedge(t, inner, hedge.Config{Delay: 10 * time.Millisecond, MaxHedges: 3}, hedge.WithBudget(refusing{}))
		if out, err := r.Invoke(t.Context(), "q"); err != nil || out != "slow" || inner.CallCount() != 1 {
			t.Errorf("Invoke() = %v, %v after %d calls, want the first answer and no hedge", out, err, inner.CallCount())
		}
	})
}

func TestHedgesGoToAlternates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		primary := mock.New(mock.Result{Value: "primary", Delay: time.Second})
		other := mock.New(mock.Result{Value: "other", Delay: 10 * time.Millisecond})
		r := newHedge(t, primary, hedge.Config{Delay: 100 * time.Millisecond, MaxHedges: 1}, hedge.WithAlternates(other))
		if out, err := r.Invoke(t.Context(), "q"); err != nil || out != "other" {
			t.Errorf("Invoke() = %v, %v, want the alternate's answer", out, err)
		}
	})
}

// With a quantile, the delay follows recent latencies, within its bounds.
func TestQuantileDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls, slowFrom atomic.Int32
		slowFrom.Store(1 << 30)
		model := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
			n := calls.Add(1)
			d := 300 * time.Millisecond
			switch {
			case n == slowFrom.Load():
				d = time.Hour
			case n > slowFrom.Load():
				d = 0
			}
			select {
			case <-time.After(d):
				return n, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
		r := newHedge(t, model, hedge.Config{Delay: 10 * time.Millisecond, Quantile: 0.95, MaxDelay: time.Second, MaxHedges: 1})
		for range 40 { // 300ms each
			if _, err := r.Invoke(t.Context(), "q"); err != nil {
				t.Fatal(err)
			}
		}
		// Until the window held 20 samples, the delay was the 10ms floor:
		// those calls were hedged.
		if n := calls.Load(); n < 40+19 {
			t.Errorf("attempts = %d, want the first 19 calls hedged at the floor", n)
		}
		synctest.Wait() // the losers of ties between the delay and the answer have ended
		slowFrom.Store(calls.Load() + 1)
		start := time.Now()
		if out, err := r.Invoke(t.Context(), "q"); err != nil || out != slowFrom.Load()+1 {
			t.Fatalf("Invoke() = %v, %v, want the hedge's answer", out, err)
		}
		if got := time.Since(start); got != 300*time.Millisecond {
			t.Errorf("hedged after %v, want at the p95 of recent latencies, 300ms", got)
		}
	})
}

func TestStreamRacesToTheFirstChunk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := mock.New(mock.Result{Chunks: []any{"a1", "a2"}, Delay: 500 * time.Millisecond})
		fast := mock.New(mock.Result{Chunks: []any{"b1", "b2"}, Delay: 100 * time.Millisecond})
		r := newHedge(t, slow, hedge.Config{Delay: 200 * time.Millisecond, MaxHedges: 1}, hedge.WithAlternates(fast))
		start := time.Now()
		ch, err := r.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		var got []any
		for v := range ch {
			if len(got) == 0 && time.Since(start) != 300*time.Millisecond {
				t.Errorf("first chunk after %v, want 300ms", time.Since(start))
			}
			got = append(got, v)
		}
		if !slices.Equal(got, []any{"b1", "b2"}) {
			t.Errorf("values = %v, want only the winner's chunks", got)
		}
		synctest.Wait()
		if cause := context.Cause(slow.Calls()[0].Ctx); !errors.Is(cause, hedge.ErrLost) {
			t.Errorf("loser's cause = %v, want ErrLost", cause)
		}
	})
}

func TestStreamAllFailIsTheLastValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newHedge(t, mock.New(mock.Stream(errDown)), hedge.Config{Delay: time.Second, MaxHedges: 1})
		ch, err := r.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		got := mock.Drain(ch)
		if len(got) != 1 || !errors.Is(got[0].(error), errDown) {
			t.Errorf("values = %v, want the failure alone", got)
		}
	})
}

// A caller that cancels ends every attempt; no goroutine is left behind.
func TestCallerCancelEndsEveryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Result{Delay: time.Hour})
		r := newHedge(t, inner, hedge.Config{Delay: 100 * time.Millisecond, MaxHedges: 2})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := r.Invoke(ctx, "q"); !errors.Is(err, context.DeadlineExceeded) || inner.CallCount() != 3 {
			t.Errorf("Invoke() error = %v after %d calls, want the deadline after 3", err, inner.CallCount())
		}
		synctest.Wait()
		for i, c := range inner.Calls() {
			if c.Ctx.Err() == nil {
				t.Errorf("attempt %d still live", i)
			}
		}
	})
}

func TestNewRejectsABadConfig(t *testing.T) {
	for _, cfg := range []hedge.Config{
		{MaxHedges: 0},
		{MaxHedges: 1, Delay: -1},
		{MaxHedges: 1, Quantile: 1},
		{MaxHedges: 1, Quantile: -0.5},
		{MaxHedges: 1, Delay: time.Second, MaxDelay: time.Millisecond},
	} {
		if _, err := hedge.New(mock.New(), cfg); err == nil {
			t.Errorf("New(%+v) error = nil", cfg)
		}
	}
	if _, err := hedge.New(nil, hedge.Config{MaxHedges: 1}); err == nil {
		t.Error("New(nil) error = nil")
	}
}

func TestPanicInAttemptIsItsFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { panic("boom") })
		r := newHedge(t, boom, hedge.Config{Delay: time.Second, MaxHedges: 1})
		_, err := r.Invoke(t.Context(), "q")
		if pe, ok := errors.AsType[*core.PanicError](err); !ok || pe.Value != "boom" {
			t.Errorf("Invoke() error = %v, want a *core.PanicError", err)
		}
	})
}

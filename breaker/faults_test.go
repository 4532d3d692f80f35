package breaker_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
)

// runnable is a Runnable made of functions.
type runnable struct {
	invoke func(ctx context.Context) (any, error)
	batch  func(ctx context.Context, ins []any) ([]any, error)
	stream func(ctx context.Context) (<-chan any, error)
}

func (r runnable) Invoke(ctx context.Context, _ any, _ ...core.Option) (any, error) {
	return r.invoke(ctx)
}
func (r runnable) Batch(ctx context.Context, ins []any, _ ...core.Option) ([]any, error) {
	return r.batch(ctx, ins)
}
func (r runnable) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	return r.stream(ctx)
}

// halfOpen trips b with three failures of failing and waits out its
// Timeout, so the next call is the half-open probe.
func halfOpen(t *testing.T, b *breaker.Runnable) {
	t.Helper()
	for range 3 {
		_, _ = b.Invoke(t.Context(), "fail")
	}
	time.Sleep(10*time.Second + time.Millisecond)
	if b.State() != gobreaker.StateHalfOpen {
		t.Fatalf("State() = %v, want half-open", b.State())
	}
}

// failThen answers Invoke with errDown and hands Stream to stream.
func failThen(stream func(ctx context.Context) (<-chan any, error)) runnable {
	return runnable{invoke: func(context.Context) (any, error) { return nil, errDown }, stream: stream}
}

// An inner Stream that returns (nil, nil) gets an error at once, and the
// half-open probe slot is given back.
func TestStreamNilChannelIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(t, failThen(func(context.Context) (<-chan any, error) { return nil, nil }))
		halfOpen(t, b)
		ch, err := b.Stream(t.Context(), "q")
		if ch != nil || err == nil {
			t.Fatalf("Stream() = %v, %v, want no channel and an error", ch, err)
		}
		if r, ok := err.(interface{ Retryable() bool }); !ok || r.Retryable() {
			t.Errorf("error = %v, want it not retryable", err)
		}
		if b.State() != gobreaker.StateOpen {
			t.Errorf("State() = %v, want open: the probe failed and its slot is free", b.State())
		}
	})
}

// A panic in the inner Runnable counts as a failure (so a half-open probe
// slot is never kept) and propagates unchanged.
func TestInvokePanicCountsAndPropagates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		calls := 0
		b := newBreaker(t, runnable{invoke: func(context.Context) (any, error) {
			calls++
			if calls > 3 {
				panic(boom)
			}
			return nil, errDown
		}})
		halfOpen(t, b)
		func() {
			defer func() {
				if v := recover(); v != boom {
					t.Errorf("recovered %v, want the inner panic", v)
				}
			}()
			_, _ = b.Invoke(t.Context(), "q")
		}()
		if b.State() != gobreaker.StateOpen {
			t.Errorf("State() = %v after the probe panicked, want open", b.State())
		}
	})
}

func TestBatchTypedNilBatchError(t *testing.T) {
	b := newBreaker(t, runnable{batch: func(_ context.Context, ins []any) ([]any, error) {
		var be *core.BatchError
		return make([]any, len(ins)), be
	}})
	for range 3 {
		if _, err := b.Batch(t.Context(), []any{1, 2}); err == nil {
			t.Fatal("Batch() error = nil, want the inner's")
		}
	}
	if b.State() != gobreaker.StateOpen {
		t.Errorf("State() = %v, want open: a nil *BatchError is a failed answer", b.State())
	}
}

// gobreaker reports state changes with its lock held; the hooks are
// called after it is released, so they may read the breaker.
func TestStateHooksMayReadTheBreaker(t *testing.T) {
	var b *breaker.Runnable
	var seen []string
	read := func(_ string, _, to gobreaker.State) {
		seen = append(seen, b.State().String()+"/"+to.String())
		_ = b.Counts()
	}
	st := settings()
	st.OnStateChange = read
	var err error
	b, err = breaker.New(mock.New(mock.Fail(errDown)), st, breaker.WithOnStateChange(read))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 3 {
			_, _ = b.Invoke(context.Background(), "q")
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // only on failure: the breaker deadlocked
		t.Fatal("a hook reading State() deadlocked the breaker")
	}
	if want := []string{"open/open", "open/open"}; len(seen) != 2 || seen[0] != want[0] || seen[1] != want[1] {
		t.Errorf("hooks saw %v, want %v", seen, want)
	}
}

// A stream whose last value is an error failed, even if its consumer then
// cancels, as core asks it to.
func TestStreamConsumerCancelsAfterErrorValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(t, mock.New(mock.Stream(errDown, "a")))
		for range 3 {
			ctx, cancel := context.WithCancel(t.Context())
			ch, err := b.Stream(ctx, "q")
			if err != nil {
				t.Fatal(err)
			}
			for v := range ch {
				if _, isErr := v.(error); isErr {
					cancel()
				}
			}
			cancel()
			synctest.Wait()
		}
		if c := b.Counts(); b.State() != gobreaker.StateOpen && c.TotalFailures != 3 {
			t.Errorf("State, failures = %v, %d, want open after 3 failed streams", b.State(), c.TotalFailures)
		}
	})
}

// A stream cancelled with a cause of its own (a retry layer abandoning
// the attempt) failed; the caller's own cancellation does not count.
func TestStreamAbandonedWithCauseCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(t, mock.New(mock.Result{Delay: time.Hour}))
		abandoned := errors.New("abandoned by the retry layer")
		for range 3 {
			ctx, cancel := context.WithCancelCause(t.Context())
			ch, err := b.Stream(ctx, "q")
			if err != nil {
				t.Fatal(err)
			}
			cancel(abandoned)
			for range ch {
			}
			synctest.Wait()
		}
		if b.State() != gobreaker.StateOpen {
			t.Errorf("State() = %v, want open after 3 abandoned streams", b.State())
		}
	})
}

// localError is refused on this side of the wire, like a rate limiter's.
type localError struct{}

func (localError) Error() string { return "refused locally" }
func (localError) Local() bool   { return true }

func TestLocalRefusalsDoNotCount(t *testing.T) {
	b := newBreaker(t, mock.New(mock.Fail(localError{})))
	for range 10 {
		_, _ = b.Invoke(t.Context(), "q")
	}
	if c := b.Counts(); b.State() != gobreaker.StateClosed || c.TotalFailures != 0 || c.TotalSuccesses != 0 {
		t.Errorf("State, counts = %v, %+v, want closed and nothing counted", b.State(), c)
	}
	// An inner circuit's rejection is local too.
	inner := newBreaker(t, mock.New(mock.Fail(errDown)))
	st := settings()
	st.ReadyToTrip = func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 5 }
	outer, err := breaker.New(inner, st)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		_, _ = outer.Invoke(t.Context(), "q")
	}
	if c := outer.Counts(); inner.State() != gobreaker.StateOpen || outer.State() != gobreaker.StateClosed || c.TotalFailures != 3 {
		t.Errorf("inner, outer = %v, %v (outer %+v), want open, closed after 3 failures and 7 uncounted rejections", inner.State(), outer.State(), c)
	}
}

// A state-change hook that panics on a stream's forwarding goroutine ends
// the stream with a *core.PanicError instead of crashing the process.
func TestStreamHookPanicIsTheLastValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(t, mock.New(mock.Fail(errDown), mock.Fail(errDown), mock.Fail(errDown), mock.Stream(nil, "a")),
			breaker.WithOnStateChange(func(_ string, _, to gobreaker.State) {
				if to == gobreaker.StateClosed {
					panic("hook")
				}
			}))
		halfOpen(t, b)
		ch, err := b.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		got := mock.Drain(ch)
		if len(got) != 2 || got[0] != "a" {
			t.Fatalf("values = %v, want [a, panic]", got)
		}
		if pe, ok := got[1].(*core.PanicError); !ok || pe.Value != "hook" {
			t.Errorf("last value = %v, want a *core.PanicError of the hook's panic", got[1])
		}
	})
}

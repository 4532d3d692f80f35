package breaker_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/metric/noop"
	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errDown = &mock.HTTPError{Code: 503, Msg: "down"}

func settings() gobreaker.Settings {
	return gobreaker.Settings{
		Name:        "llm",
		Timeout:     10 * time.Second,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 3 },
	}
}

func newBreaker(t testing.TB, inner core.Runnable, opts ...breaker.Option) *breaker.Runnable {
	t.Helper()
	b, err := breaker.New(inner, settings(), append([]breaker.Option{breaker.WithMeterProvider(noop.NewMeterProvider())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOpensProbesAndCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var changes []string
		inner := mock.New(mock.Fail(errDown), mock.Fail(errDown), mock.Fail(errDown), mock.OK("back"))
		b := newBreaker(t, inner, breaker.WithOnStateChange(func(_ string, from, to gobreaker.State) {
			changes = append(changes, from.String()+"->"+to.String())
		}))
		for range 3 {
			if _, err := b.Invoke(t.Context(), "q"); !errors.Is(err, errDown) {
				t.Fatalf("Invoke() error = %v, want the provider's", err)
			}
		}
		if b.State() != gobreaker.StateOpen {
			t.Fatalf("State() = %v after 3 failures, want open", b.State())
		}
		_, err := b.Invoke(t.Context(), "q")
		oe, ok := errors.AsType[*breaker.OpenError](err)
		if !ok || !errors.Is(err, gobreaker.ErrOpenState) || oe.Retryable() {
			t.Fatalf("Invoke() while open error = %v, want a non-retryable *OpenError", err)
		}
		if inner.CallCount() != 3 {
			t.Errorf("inner calls = %d, want 3: the open circuit makes none", inner.CallCount())
		}
		time.Sleep(10*time.Second + time.Millisecond) // past the open state's Timeout
		if out, err := b.Invoke(t.Context(), "q"); err != nil || out != "back" {
			t.Fatalf("probe Invoke() = %v, %v, want back", out, err)
		}
		want := []string{"closed->open", "open->half-open", "half-open->closed"}
		if !slices.Equal(changes, want) {
			t.Errorf("state changes = %v, want %v", changes, want)
		}
	})
}

func TestCallerCancellationsDoNotCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Result{Delay: time.Hour})
		b := newBreaker(t, inner)
		for range 5 {
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			_, err := b.Invoke(ctx, "q")
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Invoke() error = %v, want the deadline", err)
			}
		}
		if b.State() != gobreaker.StateClosed || b.Counts().TotalFailures != 0 {
			t.Errorf("State, failures = %v, %d, want closed, 0", b.State(), b.Counts().TotalFailures)
		}
	})
}

func TestOwnCauseTimeoutsCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(t, mock.New(mock.Result{Delay: time.Hour}))
		slow := errors.New("attempt timed out")
		for range 3 {
			ctx, cancel := context.WithTimeoutCause(t.Context(), time.Second, slow)
			_, _ = b.Invoke(ctx, "q")
			cancel()
		}
		if b.State() != gobreaker.StateOpen {
			t.Errorf("State() = %v, want open: per-attempt timeouts are the provider's", b.State())
		}
	})
}

func TestClientErrorsDoNotTrip(t *testing.T) {
	b := newBreaker(t, mock.New(mock.Fail(&mock.HTTPError{Code: 400})))
	for range 5 {
		_, _ = b.Invoke(t.Context(), "q")
	}
	if b.State() != gobreaker.StateClosed {
		t.Errorf("State() = %v after five 400s, want closed", b.State())
	}
}

func TestStreamCountsByOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Stream(errDown, "a"))
		b := newBreaker(t, inner)
		for i := range 3 {
			if b.State() != gobreaker.StateClosed {
				t.Fatalf("stream %d: State() = %v, want closed until it ends", i, b.State())
			}
			ch, err := b.Stream(t.Context(), "q")
			if err != nil {
				t.Fatal(err)
			}
			got := mock.Drain(ch)
			if len(got) != 2 || got[1] != errDown {
				t.Fatalf("values = %v, want [a down]", got)
			}
			synctest.Wait()
		}
		if b.State() != gobreaker.StateOpen {
			t.Errorf("State() = %v after 3 failed streams, want open", b.State())
		}
		if _, err := b.Stream(t.Context(), "q"); !errors.Is(err, gobreaker.ErrOpenState) {
			t.Errorf("Stream() while open error = %v, want ErrOpenState", err)
		}
	})
}

// TestAStreamsFailureIsCountedBeforeTheConsumerHasIt: a caller that has a
// stream's error value, and calls again at once as a retry does, finds the
// circuit open, even when a state-change hook is slow.
func TestAStreamsFailureIsCountedBeforeTheConsumerHasIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Stream(errDown, "a"))
		b := newBreaker(t, inner, breaker.WithOnStateChange(func(string, gobreaker.State, gobreaker.State) {
			time.Sleep(time.Second) // an exporter, a log write
		}))
		for range 3 {
			ch, err := b.Stream(t.Context(), "q")
			if err != nil {
				t.Fatal(err)
			}
			for v := range ch {
				if v == errDown {
					break // the consumer has the failure: no wait for the close
				}
			}
		}
		if _, err := b.Stream(t.Context(), "q"); !errors.Is(err, gobreaker.ErrOpenState) {
			t.Errorf("Stream() right after the third failure's error value: %v, want ErrOpenState", err)
		}
		synctest.Wait()
	})
}

func TestStreamCancelledByConsumerDoesNotCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(t, mock.New(mock.Result{Chunks: []any{1, 2, 3}, ChunkDelay: time.Second}))
		for range 4 {
			ctx, cancel := context.WithCancel(t.Context())
			ch, err := b.Stream(ctx, "q")
			if err != nil {
				t.Fatal(err)
			}
			<-ch
			cancel()
			for range ch {
			}
		}
		synctest.Wait()
		if c := b.Counts(); c.TotalFailures != 0 {
			t.Errorf("failures = %d, want 0", c.TotalFailures)
		}
	})
}

func TestBatchCountsAsOneCall(t *testing.T) {
	inner := mock.New().ForInput(1, mock.Fail(errDown))
	b := newBreaker(t, inner)
	for range 3 {
		_, _ = b.Batch(t.Context(), []any{0, 1})
	}
	if b.State() != gobreaker.StateClosed {
		t.Errorf("State() = %v after partial failures, want closed", b.State())
	}
	all := newBreaker(t, mock.New().FailBatch(errDown, errDown, errDown))
	for range 3 {
		_, _ = all.Batch(t.Context(), []any{0, 1})
	}
	if all.State() != gobreaker.StateOpen {
		t.Errorf("State() = %v after 3 whole failures, want open", all.State())
	}
}

func TestNewRejectsNil(t *testing.T) {
	if _, err := breaker.New(nil, settings()); err == nil {
		t.Error("New(nil) error = nil, want an error")
	}
}

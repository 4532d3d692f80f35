package fallback_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/mock"
)

// A candidate whose stream fails before its first chunk is moved away from
// before any of its chunks could reach the consumer.
func TestStreamMovesOnBeforeTheFirstChunk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := mock.New(mock.Stream(err503))              // an error value, no chunk
		slow := mock.New(mock.Result{Delay: time.Hour}) // no first chunk in time
		c := mock.New(mock.Stream(nil, "from", " c"))
		first := withRetry(t, "a", a)
		r := newFallback(t, []core.Runnable{first, timeoutRetry(t, "slow", slow), c})
		ch, err := r.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if got := mock.Drain(ch); !slices.Equal(got, []any{"from", " c"}) {
			t.Errorf("values = %v, want only c's chunks", got)
		}
		synctest.Wait()
		for i, m := range []*mock.Runnable{a, slow} {
			for _, call := range m.Calls() {
				if call.Ctx.Err() == nil {
					t.Errorf("candidate %d's stream still live after the call moved on", i)
				}
			}
		}
	})
}

func TestStreamCreationFailureMovesOn(t *testing.T) {
	r := newFallback(t, []core.Runnable{mock.New(mock.Fail(localError{})), mock.New(mock.Stream(nil, "b"))})
	ch, err := r.Stream(t.Context(), "q")
	if err != nil {
		t.Fatal(err)
	}
	if got := mock.Drain(ch); !slices.Equal(got, []any{"b"}) {
		t.Errorf("values = %v, want [b]", got)
	}
	// When no candidate opens a stream, Stream returns the *Error.
	none := newFallback(t, []core.Runnable{mock.New(mock.Fail(localError{})), mock.New(mock.Fail(err400))})
	if ch, err := none.Stream(t.Context(), "q"); ch != nil || !errors.Is(err, err400) {
		t.Errorf("Stream() = %v, %v, want no channel and b's failure", ch, err)
	}
}

// After the first chunk nothing moves: a failure is the last value.
func TestStreamAfterFirstChunkNeverMovesOn(t *testing.T) {
	b := mock.New(mock.Stream(nil, "b"))
	r := newFallback(t, []core.Runnable{mock.New(mock.Stream(localError{}, "a1")), b})
	ch, err := r.Stream(t.Context(), "q")
	if err != nil {
		t.Fatal(err)
	}
	got := mock.Drain(ch)
	if len(got) != 2 || got[0] != "a1" || !errors.As(got[1].(error), new(localError)) || b.CallCount() != 0 {
		t.Errorf("values = %v with %d calls to b, want [a1, a's error] and no call to b", got, b.CallCount())
	}
}

func TestStreamAllFailIsTheOnlyValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFallback(t, []core.Runnable{withRetry(t, "a", mock.New(mock.Stream(err503))), withRetry(t, "b", mock.New(mock.Stream(err503)))})
		ch, err := r.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		got := mock.Drain(ch)
		if len(got) != 1 {
			t.Fatalf("values = %v, want one error", got)
		}
		if fe, ok := errors.AsType[*fallback.Error](got[0].(error)); !ok || len(fe.Errs) != 2 {
			t.Errorf("value = %v, want a *fallback.Error of both candidates", got[0])
		}
	})
}

// A consumer that cancels moves the call to no next candidate, and no
// goroutine is left behind (goleak checks the package).
func TestStreamCallerCancelMovesNowhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mock.New(mock.Stream(nil, "b"))
		r := newFallback(t, []core.Runnable{mock.New(mock.Result{Delay: time.Hour}), b})
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := r.Stream(ctx, "q")
		if err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(time.Second, cancel)
		if got := mock.Drain(ch); len(got) != 0 {
			t.Errorf("values = %v, want none", got)
		}
		synctest.Wait()
		if b.CallCount() != 0 {
			t.Errorf("b calls = %d, want 0", b.CallCount())
		}
	})
}

// panicky panics in Stream the second time it is called.
type panicky struct {
	core.Runnable
}

func (panicky) Stream(context.Context, any, ...core.Option) (<-chan any, error) { panic("boom") }

func TestStreamPanicOnForwarderIsTheLastValue(t *testing.T) {
	r := newFallback(t, []core.Runnable{mock.New(mock.Stream(localError{})), panicky{mock.New()}})
	ch, err := r.Stream(t.Context(), "q")
	if err != nil {
		t.Fatal(err)
	}
	got := mock.Drain(ch)
	if len(got) != 1 {
		t.Fatalf("values = %v, want one", got)
	}
	if pe, ok := got[0].(*core.PanicError); !ok || pe.Value != "boom" {
		t.Errorf("value = %v, want a *core.PanicError", got[0])
	}
}

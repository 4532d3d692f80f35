package fallback_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/internal/route"
)

// shapeOf returns a stream's values with "reset" for a core.Reset and
// "error" for an error value.
func shapeOf(got []any) []any {
	var shape []any
	for _, v := range got {
		switch v.(type) {
		case core.Reset:
			shape = append(shape, "reset")
		case error:
			shape = append(shape, "error")
		default:
			shape = append(shape, v)
		}
	}
	return shape
}

func streamOf(t *testing.T, r core.Runnable, input any, opts ...core.Option) []any {
	t.Helper()
	ch, err := r.Stream(t.Context(), input, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return mock.Drain(ch)
}

// For a caller that accepts resets, a stream that breaks after its first
// chunk goes on as a Reset and the next candidate's whole answer, sent
// the original input (WithInput applied), never the partial answer.
func TestACommittedStreamRestartsOnTheNextCandidate(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	a := mock.New(mock.Stream(io.ErrUnexpectedEOF, "a1", "a2"))
	b := mock.New(mock.Stream(nil, "b1", "b2", "b3"))
	r := newFallback(t, []core.Runnable{a, b},
		fallback.WithInput(func(i int, in any) any { return in.(string) + "@" + string(rune('a'+i)) }),
		fallback.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	got := streamOf(t, r, "q", core.WithResets())
	if shape := shapeOf(got); !slices.Equal(shape, []any{"a1", "a2", "reset", "b1", "b2", "b3"}) {
		t.Fatalf("stream = %v, want a's chunks, a reset, b's answer", shape)
	}
	if cause := got[2].(core.Reset).Cause; !errors.Is(cause, io.ErrUnexpectedEOF) {
		t.Errorf("Reset.Cause = %v, want a's break", cause)
	}
	if calls := b.Calls(); len(calls) != 1 || calls[0].Input != "q@b" {
		t.Fatalf("b's calls = %v, want one, of the original input for b", calls)
	}
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("spans = %d, want the call span", len(spans))
	}
	var events []string
	for _, ev := range spans[0].Events() {
		events = append(events, ev.Name)
	}
	if !slices.Equal(events, []string{"fallback.restart"}) {
		t.Errorf("events = %v, want one fallback.restart", events)
	}
	for _, kv := range spans[0].Attributes() {
		if kv.Key == "fallback.candidate" && kv.Value.AsInt64() != 1 {
			t.Errorf("fallback.candidate = %v, want 1", kv.Value.AsInt64())
		}
	}
}

// Without core.WithResets nothing changes, and WithMaxRestarts(0) turns
// restarts off.
func TestNoRestartWithoutResetsOrWithNone(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []fallback.Option
		call []core.Option
	}{
		{"no WithResets", nil, nil},
		{"WithMaxRestarts(0)", []fallback.Option{fallback.WithMaxRestarts(0)}, []core.Option{core.WithResets()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := mock.New(mock.Stream(nil, "b1"))
			r := newFallback(t, []core.Runnable{mock.New(mock.Stream(io.ErrUnexpectedEOF, "a1")), b}, tc.opts...)
			if shape := shapeOf(streamOf(t, r, "q", tc.call...)); !slices.Equal(shape, []any{"a1", "error"}) {
				t.Fatalf("stream = %v, want a1 and a's error", shape)
			}
			if b.CallCount() != 0 {
				t.Errorf("b called %d times, want 0", b.CallCount())
			}
		})
	}
}

// WithMaxRestarts bounds the restarts of a call; a candidate that fails
// before its first chunk in a restart moves the restart on, and is no
// restart of its own.
func TestMaxRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := mock.New(mock.Stream(io.ErrUnexpectedEOF, "a1"))
		b := withRetry(t, "b", mock.New(mock.Stream(err503))) // exhausted before a chunk
		c := mock.New(mock.Stream(io.ErrUnexpectedEOF, "c1"))
		d := mock.New(mock.Stream(nil, "d1"))
		got := streamOf(t, newFallback(t, []core.Runnable{a, b, c, d}), "q", core.WithResets())
		if shape := shapeOf(got); !slices.Equal(shape, []any{"a1", "reset", "c1", "error"}) {
			t.Fatalf("stream = %v, want a1, a reset, c1 and c's error (one restart)", shape)
		}
		if d.CallCount() != 0 {
			t.Errorf("d called %d times, want 0", d.CallCount())
		}
		got = streamOf(t, newFallback(t, []core.Runnable{a, b, c, d}, fallback.WithMaxRestarts(2)), "q", core.WithResets())
		if shape := shapeOf(got); !slices.Equal(shape, []any{"a1", "reset", "c1", "reset", "d1"}) {
			t.Fatalf("WithMaxRestarts(2): stream = %v, want a1, reset, c1, reset, d1", shape)
		}
	})
	if _, err := fallback.New([]core.Runnable{mock.New()}, fallback.WithMaxRestarts(-1)); err == nil {
		t.Error("New(WithMaxRestarts(-1)) = nil error, want one")
	}
}

// When no candidate answers a restart, the *Error of every candidate's
// failure, the one that broke the stream first, is the last value.
func TestARestartNobodyServes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := mock.New(mock.Stream(io.ErrUnexpectedEOF, "a1"))
		b := withRetry(t, "b", mock.New(mock.Stream(err503)))
		got := streamOf(t, newFallback(t, []core.Runnable{a, b}), "q", core.WithResets())
		if shape := shapeOf(got); !slices.Equal(shape, []any{"a1", "error"}) {
			t.Fatalf("stream = %v, want a1 and the error", shape)
		}
		var fe *fallback.Error
		if !errors.As(got[1].(error), &fe) || len(fe.Errs) != 2 || !errors.Is(fe.Errs[0], io.ErrUnexpectedEOF) || !errors.Is(fe.Errs[1], err503) {
			t.Errorf("last value = %v, want a *fallback.Error of a's break and b's 503", got[1])
		}
	})
}

// toolCaller delivers a tool call, then breaks.
type toolCaller struct{}

func (toolCaller) Invoke(context.Context, any, ...core.Option) (any, error) { return nil, nil }
func (toolCaller) Batch(context.Context, []any, ...core.Option) ([]any, error) {
	return nil, nil
}

func (toolCaller) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	ch := make(chan any, 2)
	route.MarkToolCall(ctx)
	ch <- "call send_email"
	ch <- io.ErrUnexpectedEOF
	close(ch)
	return ch, nil
}

type idempotent struct {
	core.Runnable
	ok bool
}

func (i idempotent) Idempotent() bool { return i.ok }

// A stream that delivered a tool call is restarted only when every
// candidate says it is idempotent.
func TestAToolCallStreamRestartsOnlyWhenIdempotent(t *testing.T) {
	b := mock.New(mock.Stream(nil, "b1"))
	for _, tc := range []struct {
		name       string
		candidates []core.Runnable
		want       []any
	}{
		{"they say nothing", []core.Runnable{toolCaller{}, b}, []any{"call send_email", "error"}},
		{"one is not", []core.Runnable{idempotent{toolCaller{}, true}, idempotent{b, false}}, []any{"call send_email", "error"}},
		{"all are", []core.Runnable{idempotent{toolCaller{}, true}, idempotent{b, true}}, []any{"call send_email", "reset", "b1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if shape := shapeOf(streamOf(t, newFallback(t, tc.candidates), "q", core.WithResets())); !slices.Equal(shape, tc.want) {
				t.Errorf("stream = %v, want %v", shape, tc.want)
			}
		})
	}
}

// A consumer that cancels while a restart waits for its first chunk ends
// the stream, with no Reset and no chunk of the broken candidate after it.
func TestACancelDuringAFallbackRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := mock.New(mock.Stream(io.ErrUnexpectedEOF, "a1"))
		b := mock.New(mock.Result{Chunks: []any{"b1"}, Delay: time.Hour})
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := newFallback(t, []core.Runnable{a, b}).Stream(ctx, "q", core.WithResets())
		if err != nil {
			t.Fatal(err)
		}
		if v := <-ch; v != "a1" {
			t.Fatalf("first value = %v", v)
		}
		time.Sleep(time.Minute)
		cancel()
		for v := range ch {
			if _, ok := v.(core.Reset); ok || v == "b1" {
				t.Errorf("after the cancel: %v", v)
			}
		}
		synctest.Wait()
		for _, call := range b.Calls() {
			if call.Ctx.Err() == nil {
				t.Error("b's stream still live after the call ended")
			}
		}
	})
}

package retry_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/internal/route"
	"github.com/steadfast-go/steadfast/retry"
)

func restartingConfig() retry.RetryConfig {
	cfg := streamConfig()
	cfg.RestartStreams = true
	return cfg
}

// streamWith streams "q" through a RetryRunnable over inner, with opts
// for the call, and returns every value the consumer got.
func streamWith(t *testing.T, r core.Runnable, opts ...core.Option) []any {
	t.Helper()
	ch, err := r.Stream(t.Context(), "q", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return mock.Drain(ch)
}

// resets returns the values with every core.Reset in place of its
// position's "reset" and the Resets' causes.
func resets(got []any) (shape []any, causes []error) {
	for _, v := range got {
		if r, ok := v.(core.Reset); ok {
			shape, causes = append(shape, "reset"), append(causes, r.Cause)
			continue
		}
		if _, ok := v.(error); ok {
			shape = append(shape, "error")
			continue
		}
		shape = append(shape, v)
	}
	return shape, causes
}

// A stream that breaks after its first chunk is started again for a caller
// that accepts resets: a core.Reset, then the whole answer; each break,
// however it shows, is a restart's cause.
func TestRestartAfterABreak(t *testing.T) {
	malformed := errors.New("stream: invalid character 'x' looking for beginning of value")
	for _, tc := range []struct {
		name  string
		first mock.Result
		cause func(error) bool
	}{
		{"error value", mock.Stream(io.ErrUnexpectedEOF, 1, 2, 3),
			func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
		{"malformed event", mock.Stream(malformed, 1, 2, 3),
			func(err error) bool { return errors.Is(err, malformed) }},
		{"stall", mock.Result{Chunks: []any{1, 2, 3, 4}, ChunkDelay: time.Minute},
			func(err error) bool { return errors.Is(err, retry.ErrStreamStalled) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := mock.New(tc.first, mock.Stream(nil, 1, 2, 3, 4, 5))
				rec := newRecorder()
				r := newRetry(t, inner, restartingConfig(), rec.options()...)
				shape, causes := resets(streamWith(t, r, core.WithResets()))
				want := []any{1, "reset", 1, 2, 3, 4, 5}
				if tc.name != "stall" {
					want = []any{1, 2, 3, "reset", 1, 2, 3, 4, 5}
				}
				if !slices.Equal(shape, want) {
					t.Fatalf("stream = %v, want %v", shape, want)
				}
				if !tc.cause(causes[0]) {
					t.Errorf("Reset.Cause = %v, want the break", causes[0])
				}
				if n := inner.CallCount(); n != 2 {
					t.Errorf("inner streams = %d, want 2", n)
				}
				wantAttrs(t, "call span", rec.one(t, "retry.stream").Attributes(), map[string]string{
					"retry.outcome": "success", "retry.attempts": "2"})
				attempts := rec.ended("retry.attempt")
				if len(attempts) != 2 {
					t.Fatalf("attempt spans = %d, want 2", len(attempts))
				}
				wantAttrs(t, "first attempt", attempts[0].Attributes(), map[string]string{"retry.attempt": "1"}, "retry.restarted")
				wantAttrs(t, "restart", attempts[1].Attributes(), map[string]string{"retry.attempt": "2", "retry.restarted": "true"})
			})
		})
	}
}

// Without core.WithResets, or without RestartStreams, nothing changes: a
// failure after the first chunk is the stream's last value.
func TestNoRestartUnlessBothSayIt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		restart bool
		opts    []core.Option
	}{
		{"RestartStreams without WithResets", true, nil},
		{"WithResets without RestartStreams", false, []core.Option{core.WithResets()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := mock.New(mock.Stream(io.ErrUnexpectedEOF, 1, 2), mock.Stream(nil, 1, 2, 3))
				cfg := streamConfig()
				cfg.RestartStreams = tc.restart
				got := streamWith(t, newRetry(t, inner, cfg), tc.opts...)
				if shape, _ := resets(got); !slices.Equal(shape, []any{1, 2, "error"}) {
					t.Fatalf("stream = %v, want 1 2 and the error", shape)
				}
				if !errors.Is(got[2].(error), io.ErrUnexpectedEOF) {
					t.Errorf("last value = %v, want the break", got[2])
				}
				if n := inner.CallCount(); n != 1 {
					t.Errorf("inner streams = %d, want 1", n)
				}
			})
		})
	}
}

// A restart whose stream fails before its first chunk is retried as part
// of the same restart: one Reset, just before the answer that goes on.
func TestOneResetPerRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(
			mock.Stream(io.ErrUnexpectedEOF, 1, 2),
			mock.Fail(&mock.HTTPError{Code: 503}),
			mock.Stream(&mock.HTTPError{Code: 502}),
			mock.Stream(nil, 1, 2, 3))
		got := streamWith(t, newRetry(t, inner, restartingConfig()), core.WithResets())
		if shape, _ := resets(got); !slices.Equal(shape, []any{1, 2, "reset", 1, 2, 3}) {
			t.Fatalf("stream = %v, want 1 2 reset 1 2 3", shape)
		}
		if n := inner.CallCount(); n != 4 {
			t.Errorf("inner streams = %d, want 4", n)
		}
	})
}

// Restarts are retries: MaxRetries bounds them, with a backoff before
// each, and when they run out the *Error (outcome committed) is the last
// value.
func TestRestartsRunOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Stream(io.ErrUnexpectedEOF, 1, 2))
		cfg := restartingConfig()
		cfg.MaxRetries, cfg.Jitter, cfg.BackoffFactor = 2, 0, 2
		start := time.Now()
		got := streamWith(t, newRetry(t, inner, cfg), core.WithResets())
		if shape, _ := resets(got); !slices.Equal(shape, []any{1, 2, "reset", 1, 2, "reset", 1, 2, "error"}) {
			t.Fatalf("stream = %v, want three tries of 1 2, a reset between, then the error", shape)
		}
		var re *retry.Error
		if !errors.As(got[len(got)-1].(error), &re) || re.Outcome != retry.OutcomeCommitted || re.Attempts != 3 {
			t.Fatalf("last value = %v, want a *retry.Error committed after 3 attempts", got[len(got)-1])
		}
		if !errors.Is(re, io.ErrUnexpectedEOF) {
			t.Errorf("last value = %v, want it to wrap the break", re)
		}
		if d := time.Since(start); d != 3*time.Second { // backoffs of 1 s and 2 s
			t.Errorf("took %v, want the two backoffs, 3s", d)
		}
	})
}

// A failure no retry fixes is not restarted.
func TestAPermanentBreakIsNotRestarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Stream(retry.Permanent(errors.New("bad")), 1), mock.Stream(nil, 1, 2))
		got := streamWith(t, newRetry(t, inner, restartingConfig()), core.WithResets())
		if shape, _ := resets(got); !slices.Equal(shape, []any{1, "error"}) {
			t.Fatalf("stream = %v, want 1 and the error", shape)
		}
		if n := inner.CallCount(); n != 1 {
			t.Errorf("inner streams = %d, want 1", n)
		}
	})
}

// toolStream is a Runnable whose first stream delivers a tool call and
// breaks, and whose later streams answer.
type toolStream struct{ calls int }

func (s *toolStream) Invoke(context.Context, any, ...core.Option) (any, error) { return nil, nil }
func (s *toolStream) Batch(context.Context, []any, ...core.Option) ([]any, error) {
	return nil, nil
}

func (s *toolStream) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	s.calls++
	ch := make(chan any, 2)
	if s.calls == 1 {
		route.MarkToolCall(ctx)
		ch <- "call charge_card"
		ch <- io.ErrUnexpectedEOF
	} else {
		ch <- "answer"
	}
	close(ch)
	return ch, nil
}

type saysIdempotent struct {
	*toolStream
	idem bool
}

func (s saysIdempotent) Idempotent() bool { return s.idem }

// A stream that delivered a tool call, which its consumer may have run,
// is restarted only when the Runnable says it is idempotent.
func TestAToolCallIsNotRestartedUnlessIdempotent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		inner func(*toolStream) core.Runnable
		want  []any
	}{
		{"says nothing", func(s *toolStream) core.Runnable { return s }, []any{"call charge_card", "error"}},
		{"not idempotent", func(s *toolStream) core.Runnable { return saysIdempotent{s, false} }, []any{"call charge_card", "error"}},
		{"idempotent", func(s *toolStream) core.Runnable { return saysIdempotent{s, true} }, []any{"call charge_card", "reset", "answer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := restartingConfig()
				cfg.RetryNonIdempotent = true // the rule holds whatever the policy says of repeating calls
				got := streamWith(t, newRetry(t, tc.inner(&toolStream{}), cfg), core.WithResets())
				if shape, _ := resets(got); !slices.Equal(shape, tc.want) {
					t.Fatalf("stream = %v, want %v", shape, tc.want)
				}
			})
		})
	}
}

// A consumer that cancels during a restart's backoff ends the stream
// promptly, with no Reset: nothing hangs, nothing leaks.
func TestACancelDuringARestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Stream(io.ErrUnexpectedEOF, 1), mock.Result{Chunks: []any{1, 2}, Delay: time.Hour})
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := newRetry(t, inner, restartingConfig()).Stream(ctx, "q", core.WithResets())
		if err != nil {
			t.Fatal(err)
		}
		if v := <-ch; v != 1 {
			t.Fatalf("first value = %v, want 1", v)
		}
		time.Sleep(10 * time.Second) // past the backoff: the restart waits for its first chunk
		cancel()
		var rest []any
		for v := range ch {
			rest = append(rest, v)
		}
		for _, v := range rest {
			if _, ok := v.(core.Reset); ok {
				t.Fatalf("after the cancel: %v, want no Reset", rest)
			}
		}
		synctest.Wait()
		if n := inner.CallCount(); n != 2 {
			t.Errorf("inner streams = %d, want 2", n)
		}
	})
}

package retry_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

func TestStreamRetriesCreation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Fail(&mock.HTTPError{Code: 503}), mock.Fail(errTransient), mock.Stream(nil, "a", "b"))
		r := newRetry(t, inner, testConfig())
		start := time.Now()
		ch, err := r.Stream(t.Context(), "q")
		if err != nil {
			t.Fatalf("Stream() error = %v", err)
		}
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("creation took %v, want 3s (1s + 2s)", got)
		}
		if got := mock.Drain(ch); !slices.Equal(got, []any{"a", "b"}) {
			t.Errorf("chunks = %v, want [a b]", got)
		}
	})
}

func TestStreamCreationRetriesRunOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Fail(errTransient))
		ch, err := newRetry(t, inner, testConfig()).Stream(t.Context(), "q")
		if ch != nil {
			t.Error("Stream() returned a channel with an error")
		}
		wantOutcome(t, err, retry.OutcomeExhausted, 4)
		if inner.CallCount() != 4 {
			t.Errorf("inner calls = %d, want 4", inner.CallCount())
		}
	})
}

func TestStreamErrorBeforeFirstChunkIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Stream(errTransient), mock.Stream(nil, "hello", " world"))
		ch, err := newRetry(t, inner, testConfig()).Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if got := mock.Drain(ch); !slices.Equal(got, []any{"hello", " world"}) {
			t.Errorf("chunks = %v, want [hello  world]", got)
		}
		if inner.CallCount() != 2 {
			t.Errorf("inner calls = %d, want 2", inner.CallCount())
		}
		// The abandoned attempt's stream was cancelled before the second began.
		if first := inner.Calls()[0].Ctx; first.Err() == nil {
			t.Error("first attempt's context not cancelled")
		}
	})
}

func TestStreamPreCommitRetriesRunOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Stream(errTransient))
		ch, err := newRetry(t, inner, testConfig()).Stream(t.Context(), "q")
		if err != nil {
			t.Fatalf("Stream() error = %v, want the error on the channel", err)
		}
		got := mock.Drain(ch)
		if len(got) != 1 {
			t.Fatalf("values = %v, want the *retry.Error alone", got)
		}
		wantOutcome(t, got[0].(error), retry.OutcomeExhausted, 4)
	})
}

func TestStreamErrorAfterCommitIsPassedOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Stream(errTransient, "a", "b"), mock.Stream(nil, "x"))
		ch, err := newRetry(t, inner, testConfig()).Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		got := mock.Drain(ch)
		if want := []any{"a", "b", errTransient}; !slices.Equal(got, want) {
			t.Errorf("values = %v, want %v: no retry, no chunk twice", got, want)
		}
		if inner.CallCount() != 1 {
			t.Errorf("inner calls = %d, want 1", inner.CallCount())
		}
	})
}

func TestStreamFirstChunkTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.FirstChunkTimeout = 5 * time.Second
		inner := mock.New(
			mock.Result{Chunks: []any{"late"}, Delay: time.Hour},
			mock.Result{Chunks: []any{"on time"}, Delay: 4 * time.Second})
		start := time.Now()
		ch, err := newRetry(t, inner, cfg).Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if got := mock.Drain(ch); !slices.Equal(got, []any{"on time"}) {
			t.Errorf("chunks = %v, want [on time]", got)
		}
		// 5s timeout + 1s backoff + 4s.
		if got := time.Since(start); got != 10*time.Second {
			t.Errorf("took %v, want 10s", got)
		}
	})
}

func TestStreamPerAttemptTimeoutBoundsCreation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.PerAttemptTimeout = 2 * time.Second
		calls := 0
		inner := streamOnly(func(ctx context.Context) (<-chan any, error) {
			calls++
			if calls == 1 {
				<-ctx.Done() // a creation that hangs until cancelled
				return nil, ctx.Err()
			}
			ch := make(chan any, 1)
			ch <- "ok"
			close(ch)
			return ch, nil
		})
		ch, err := newRetry(t, inner, cfg).Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if got := mock.Drain(ch); !slices.Equal(got, []any{"ok"}) || calls != 2 {
			t.Errorf("chunks = %v after %d calls, want [ok] after 2", got, calls)
		}
	})
}

func TestStreamEmptyIsSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Stream(nil))
		ch, err := newRetry(t, inner, testConfig()).Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if got := mock.Drain(ch); len(got) != 0 || inner.CallCount() != 1 {
			t.Errorf("values = %v after %d calls, want none after 1", got, inner.CallCount())
		}
	})
}

func TestStreamConsumerCancelsMidStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		inner := mock.New(mock.Result{Chunks: []any{1, 2, 3, 4}, ChunkDelay: time.Second})
		ch, err := newRetry(t, inner, testConfig()).Stream(ctx, "q")
		if err != nil {
			t.Fatal(err)
		}
		if v := <-ch; v != 1 {
			t.Fatalf("first chunk = %v, want 1", v)
		}
		cancel()
		synctest.Wait() // the forwarder and the producer end: goleak checks at exit
		for range ch {
		}
	})
}

func TestStreamCancelDuringPreCommitBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		inner := mock.New(mock.Stream(errTransient))
		r := newRetry(t, inner, testConfig(), retry.WithOnRetry(func(context.Context, retry.RetryEvent) {
			time.AfterFunc(100*time.Millisecond, cancel)
		}))
		ch, err := r.Stream(ctx, "q")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got := mock.Drain(ch)
		if time.Since(start) != 100*time.Millisecond || len(got) > 1 {
			t.Errorf("values = %v after %v, want at most the error, at the cancellation", got, time.Since(start))
		}
	})
}

func TestStreamNonIdempotentNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Fail(errTransient), mock.Stream(nil, "x"))
		_, err := newRetry(t, mock.NonIdempotent(inner), testConfig()).Stream(t.Context(), "q")
		wantOutcome(t, err, retry.OutcomeNotRetryable, 1)
	})
}

// streamOnly is a Runnable whose Stream is f.
type streamOnly func(ctx context.Context) (<-chan any, error)

func (f streamOnly) Invoke(context.Context, any, ...core.Option) (any, error) {
	return nil, errors.New("not implemented")
}
func (f streamOnly) Batch(context.Context, []any, ...core.Option) ([]any, error) {
	return nil, errors.New("not implemented")
}
func (f streamOnly) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	return f(ctx)
}

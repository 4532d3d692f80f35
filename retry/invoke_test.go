package retry_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

func TestInvokeSucceedsAfterFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Fail(errTransient), mock.Fail(errTransient), mock.OK("answer"))
		r := newRetry(t, inner, testConfig())
		start := time.Now()
		out, err := r.Invoke(t.Context(), "q")
		if err != nil || out != "answer" {
			t.Fatalf("Invoke() = %v, %v, want answer, nil", out, err)
		}
		if got, want := time.Since(start), 3*time.Second; got != want {
			t.Errorf("took %v, want %v (1s + 2s)", got, want)
		}
	})
}

func TestRetryAfterHintReplacesDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.MaxBackoff = 2 * time.Second
		inner := mock.New(mock.Fail(&mock.HTTPError{Code: 429, After: 7 * time.Second}), mock.OK("ok"))
		var events []retry.RetryEvent
		r := newRetry(t, inner, cfg, retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) { events = append(events, ev) }))
		start := time.Now()
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatalf("Invoke() error = %v", err)
		}
		if got, want := time.Since(start), 7*time.Second; got != want {
			t.Errorf("waited %v, want exactly the hint %v (above MaxBackoff)", got, want)
		}
		if len(events) != 1 || events[0].Source != "retry_after" || events[0].Delay != 7*time.Second {
			t.Errorf("events = %+v, want one with RetryAfter and Delay 7s", events)
		}
	})
}

func TestRetryAfterAboveMaxRetryAfterStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.MaxRetryAfter = 10 * time.Second
		inner := mock.New(mock.Fail(&mock.HTTPError{Code: 429, After: 11 * time.Second}), mock.OK("ok"))
		calls, took, err := invokeOnce(t, t.Context(), cfg, inner)
		wantOutcome(t, err, retry.OutcomeRetryAfterTooLong, 1)
		if calls != 1 || took != 0 {
			t.Errorf("calls, took = %d, %v, want 1, 0", calls, took)
		}
		// The default cap is 60s.
		inner = mock.New(mock.Fail(&mock.HTTPError{Code: 429, After: 61 * time.Second}))
		_, _, err = invokeOnce(t, t.Context(), testConfig(), inner)
		wantOutcome(t, err, retry.OutcomeRetryAfterTooLong, 1)
	})
}

func TestDeadlineShorterThanDelayReturnsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.InitialBackoff = 10 * time.Second
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		calls, took, err := invokeOnce(t, ctx, cfg, mock.New(mock.Fail(errTransient)))
		wantOutcome(t, err, retry.OutcomeDeadline, 1)
		if calls != 1 || took != 0 {
			t.Errorf("calls, took = %d, %v, want 1, 0: must not sleep into the deadline", calls, took)
		}
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, errTransient) {
			t.Errorf("err = %v, want it to match context.DeadlineExceeded and the last error", err)
		}
	})
}

func TestCancelDuringLongBackoffReturnsPromptly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.InitialBackoff, cfg.MaxBackoff = 30*time.Second, 30*time.Second
		ctx, cancel := context.WithCancel(t.Context())
		inner := mock.New(mock.Fail(errTransient))
		r := newRetry(t, inner, cfg, retry.WithOnRetry(func(context.Context, retry.RetryEvent) {
			time.AfterFunc(time.Second, cancel) // cancel 1s into the 30s backoff
		}))
		start := time.Now()
		_, err := r.Invoke(ctx, "q")
		if got := time.Since(start); got != time.Second {
			t.Errorf("returned after %v, want 1s (at the cancellation)", got)
		}
		re := wantOutcome(t, err, retry.OutcomeCanceled, 1)
		if !errors.Is(err, context.Canceled) || !errors.Is(re, errTransient) {
			t.Errorf("err = %v, want it to match context.Canceled and the last error", err)
		}
	})
}

func TestErrorMessageAndUnwrap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.MaxRetries = 1
		r := newRetry(t, mock.New(mock.Fail(&mock.HTTPError{Code: 503, Msg: "unavailable"})), cfg)
		_, err := r.Invoke(t.Context(), "q", core.WithOperation("llm"))
		if got, want := err.Error(), "retry: llm: exhausted after 2 attempts: unavailable (503)"; got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
		if _, ok := errors.AsType[*mock.HTTPError](err); !ok {
			t.Errorf("errors.As(*mock.HTTPError) = false, want true")
		}
		_, err = r.Invoke(t.Context(), "q")
		if got, want := err.Error(), "retry: exhausted after 2 attempts: unavailable (503)"; got != want {
			t.Errorf("without operation: Error() = %q, want %q", got, want)
		}
	})
}

func TestAttemptFromContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []retry.AttemptInfo
		inner := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
			info, ok := retry.AttemptFromContext(ctx)
			if !ok {
				t.Fatal("AttemptFromContext() ok = false, want true")
			}
			seen = append(seen, info)
			if info.Attempt < 3 {
				return nil, errTransient
			}
			return "ok", nil
		})
		r := newRetry(t, inner, testConfig())
		for call := range 2 {
			seen = nil
			if _, err := r.Invoke(t.Context(), "q", core.WithOperation("tool")); err != nil {
				t.Fatal(err)
			}
			if len(seen) != 3 {
				t.Fatalf("call %d: attempts = %d, want 3", call, len(seen))
			}
			for i, info := range seen {
				if info.Attempt != i+1 || info.MaxAttempts != 4 || info.Operation != "tool" {
					t.Errorf("attempt %d: info = %+v", i+1, info)
				}
				if info.InvocationID == "" || info.InvocationID != seen[0].InvocationID {
					t.Errorf("attempt %d: InvocationID = %q, want %q on every attempt", i+1, info.InvocationID, seen[0].InvocationID)
				}
			}
		}
		if _, ok := retry.AttemptFromContext(t.Context()); ok {
			t.Error("AttemptFromContext(plain ctx) ok = true, want false")
		}
	})
}

func TestInvocationIDUniqueAcrossCalls(t *testing.T) {
	ids := map[string]bool{}
	inner := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		info, _ := retry.AttemptFromContext(ctx)
		return info.InvocationID, nil
	})
	r := newRetry(t, inner, testConfig())
	for range 1000 {
		out, _ := r.Invoke(t.Context(), nil)
		if ids[out.(string)] {
			t.Fatalf("InvocationID %q repeated", out)
		}
		ids[out.(string)] = true
	}
}

func TestOnRetrySeveralHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var first, second []retry.RetryEvent
		inner := mock.New(mock.Fail(errTransient), mock.Fail(errTransient), mock.OK("ok"))
		r := newRetry(t, inner, testConfig(),
			retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) { first = append(first, ev) }),
			retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) { second = append(second, ev) }))
		if _, err := r.Invoke(t.Context(), "q", core.WithOperation("llm")); err != nil {
			t.Fatal(err)
		}
		if len(first) != 2 || len(second) != 2 {
			t.Fatalf("hook calls = %d, %d, want 2, 2", len(first), len(second))
		}
		for i, ev := range first {
			want := retry.RetryEvent{Operation: "llm", Method: "invoke", Attempt: i + 1, Err: errTransient, Delay: time.Second << i, Source: "computed", Items: 1}
			if ev != want {
				t.Errorf("event %d = %+v, want %+v", i, ev, want)
			}
		}
	})
}

func TestLoggerOneWarningPerFailedCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		logger := slog.New(slog.NewJSONHandler(&buf, nil))
		r := newRetry(t, mock.New(mock.Fail(errTransient)), testConfig(), retry.WithLogger(logger))
		_, _ = r.Invoke(t.Context(), "q", core.WithOperation("llm"))
		lines := bytes.Count(buf.Bytes(), []byte("\n"))
		if lines != 1 || !bytes.Contains(buf.Bytes(), []byte(`"level":"WARN"`)) || !bytes.Contains(buf.Bytes(), []byte(`"outcome":"exhausted"`)) {
			t.Errorf("log = %s, want one WARN record with the outcome", buf.Bytes())
		}
		buf.Reset()
		r = newRetry(t, mock.New(mock.Fail(errTransient), mock.OK("ok")), testConfig(), retry.WithLogger(logger))
		_, _ = r.Invoke(t.Context(), "q")
		if buf.Len() != 0 {
			t.Errorf("log after a success = %s, want nothing", buf.Bytes())
		}
	})
}

func TestConcurrentCallsShareOneRunnable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		inner := core.RunnableFunc(func(ctx context.Context, in any, _ ...core.Option) (any, error) {
			calls.Add(1)
			info, _ := retry.AttemptFromContext(ctx)
			// Goroutine i fails its first i%4 attempts.
			if info.Attempt <= in.(int)%4 {
				return nil, errTransient
			}
			return info.Attempt, nil
		})
		r := newRetry(t, inner, testConfig())
		var wg sync.WaitGroup
		for i := range 200 {
			wg.Go(func() {
				out, err := r.Invoke(t.Context(), i)
				if err != nil {
					t.Errorf("goroutine %d: %v", i, err)
					return
				}
				if want := i%4 + 1; out != want {
					t.Errorf("goroutine %d: succeeded on attempt %v, want %d", i, out, want)
				}
			})
		}
		wg.Wait()
		if got, want := calls.Load(), int64(50*(1+2+3+4)); got != want {
			t.Errorf("inner calls = %d, want %d", got, want)
		}
	})
}

func TestNewRejectsBadInput(t *testing.T) {
	if _, err := retry.New(nil, testConfig()); err == nil {
		t.Error("New(nil) error = nil, want an error")
	}
	bad := testConfig()
	bad.Jitter = 2
	if _, err := retry.New(mock.New(), bad); err == nil {
		t.Error("New(Jitter 2) error = nil, want an error")
	}
	_, err := retry.New(mock.New(), testConfig(), retry.WithOperationConfig("llm", retry.RetryConfig{MaxRetries: -1}))
	var ce *retry.ConfigError
	if !errors.As(err, &ce) || ce.Operation != "llm" || ce.Field != "MaxRetries" {
		t.Errorf("New(bad policy) error = %v, want a ConfigError naming llm and MaxRetries", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Middleware(bad config) did not panic")
		}
	}()
	retry.Middleware(bad)
}

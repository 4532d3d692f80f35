package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"
)

var errTransient = errors.New("transient")

// quiet keeps tests from touching the global OpenTelemetry providers.
var quiet = []retry.Option{
	retry.WithTracerProvider(tnoop.NewTracerProvider()),
	retry.WithMeterProvider(noop.NewMeterProvider()),
}

func testConfig() retry.RetryConfig {
	return retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: 30 * time.Second}
}

func newRetry(t *testing.T, inner core.Runnable, cfg retry.RetryConfig, opts ...retry.Option) *retry.RetryRunnable {
	t.Helper()
	r, err := retry.New(inner, cfg, append(append([]retry.Option(nil), quiet...), opts...)...)
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	return r
}

// invokeOnce runs one Invoke under synctest and returns the error, the
// inner calls made and the virtual time it took.
func invokeOnce(t *testing.T, ctx context.Context, cfg retry.RetryConfig, inner *mock.Runnable) (int, time.Duration, error) {
	t.Helper()
	r := newRetry(t, inner, cfg)
	start := time.Now()
	_, err := r.Invoke(ctx, "q")
	return inner.CallCount(), time.Since(start), err
}

func wantOutcome(t *testing.T, err error, outcome retry.Outcome, attempts int) *retry.Error {
	t.Helper()
	re, ok := errors.AsType[*retry.Error](err)
	if !ok {
		t.Fatalf("error = %v (%T), want a *retry.Error", err, err)
	}
	if re.Outcome != outcome || re.Attempts != attempts {
		t.Fatalf("Outcome, Attempts = %q, %d, want %q, %d (err: %v)", re.Outcome, re.Attempts, outcome, attempts, err)
	}
	return re
}

// Rule 1: the caller's context is done.
func TestRule1CanceledContextStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		inner := mock.New(mock.Result{Err: errTransient, Delay: time.Second})
		time.AfterFunc(500*time.Millisecond, cancel)
		calls, _, err := invokeOnce(t, ctx, testConfig(), inner)
		wantOutcome(t, err, retry.OutcomeCanceled, 1)
		if calls != 1 {
			t.Errorf("inner calls = %d, want 1", calls)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("errors.Is(err, context.Canceled) = false, want true")
		}
	})
}

func TestRule1AlreadyCanceledMakesNoAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		calls, _, err := invokeOnce(t, ctx, testConfig(), mock.New(mock.OK("x")))
		wantOutcome(t, err, retry.OutcomeCanceled, 0)
		if calls != 0 {
			t.Errorf("inner calls = %d, want 0", calls)
		}
	})
}

type verdictError struct{ retry bool }

func (e verdictError) Error() string   { return fmt.Sprintf("verdict %v", e.retry) }
func (e verdictError) Retryable() bool { return e.retry }

// Rule 2: the error's own Retryable() verdict wins over everything below.
func TestRule2ErrorVerdict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.RetryIf = func(error) bool { return true }
		calls, _, err := invokeOnce(t, t.Context(), cfg, mock.New(mock.Fail(fmt.Errorf("wrapped: %w", retry.Permanent(&mock.HTTPError{Code: 503})))))
		wantOutcome(t, err, retry.OutcomeNotRetryable, 1)
		if calls != 1 {
			t.Errorf("Permanent: inner calls = %d, want 1", calls)
		}

		cfg.RetryIf = func(error) bool { return false }
		calls, _, err = invokeOnce(t, t.Context(), cfg, mock.New(mock.Fail(verdictError{retry: true})))
		wantOutcome(t, err, retry.OutcomeExhausted, 4)
		if calls != 4 {
			t.Errorf("Retryable() true: inner calls = %d, want 4", calls)
		}
	})
}

// Rule 3: RetryIf decides before RetryableErrors and status codes.
func TestRule3RetryIf(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.RetryableErrors = []error{errTransient}
		cfg.RetryIf = func(err error) bool { return errors.Is(err, io.EOF) }
		calls, _, err := invokeOnce(t, t.Context(), cfg, mock.New(mock.Fail(errTransient)))
		wantOutcome(t, err, retry.OutcomeNotRetryable, 1)
		if calls != 1 {
			t.Errorf("inner calls = %d, want 1", calls)
		}
		// RetryIf also decides before status codes: a 400 it accepts is retried.
		cfg.RetryIf = func(error) bool { return true }
		calls, _, _ = invokeOnce(t, t.Context(), cfg, mock.New(mock.Fail(&mock.HTTPError{Code: 400})))
		if calls != 4 {
			t.Errorf("400 accepted by RetryIf: inner calls = %d, want 4", calls)
		}
	})
}

// Rule 4: a non-empty RetryableErrors retries only its matches.
func TestRule4RetryableErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.RetryableErrors = []error{errTransient}
		inner := mock.New(mock.Fail(fmt.Errorf("call: %w", errTransient)), mock.OK("ok"))
		r := newRetry(t, inner, cfg)
		if out, err := r.Invoke(t.Context(), "q"); err != nil || out != "ok" {
			t.Fatalf("Invoke() = %v, %v, want ok, nil", out, err)
		}
		// A 503 is retryable by rule 5, but rule 4 applies first.
		calls, _, err := invokeOnce(t, t.Context(), cfg, mock.New(mock.Fail(&mock.HTTPError{Code: 503})))
		wantOutcome(t, err, retry.OutcomeNotRetryable, 1)
		if calls != 1 {
			t.Errorf("inner calls = %d, want 1", calls)
		}
	})
}

type httpStatusErr int

func (e httpStatusErr) Error() string       { return fmt.Sprintf("http %d", int(e)) }
func (e httpStatusErr) HTTPStatusCode() int { return int(e) }

// Rule 5: status codes.
func TestRule5StatusCodes(t *testing.T) {
	cases := []struct {
		code  int
		retry bool
	}{
		{408, true}, {409, true}, {425, true}, {429, true}, {500, true}, {502, true},
		{503, true}, {504, true}, {529, true}, {599, true},
		{400, false}, {401, false}, {403, false}, {404, false}, {422, false},
		{302, true}, // not 4xx or 5xx: later rules decide (rule 8)
	}
	for _, tc := range cases {
		for _, shape := range []string{"StatusCode", "HTTPStatusCode"} {
			t.Run(fmt.Sprintf("%s/%d", shape, tc.code), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var e error = &mock.HTTPError{Code: tc.code}
					if shape == "HTTPStatusCode" {
						e = httpStatusErr(tc.code)
					}
					calls, _, _ := invokeOnce(t, t.Context(), testConfig(), mock.New(mock.Fail(e)))
					want := 1
					if tc.retry {
						want = 4
					}
					if calls != want {
						t.Errorf("inner calls = %d, want %d", calls, want)
					}
				})
			})
		}
	}
}

// Rule 6: an attempt that runs out of PerAttemptTimeout is retried while
// the caller's context is fine.
func TestRule6PerAttemptTimeoutRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.PerAttemptTimeout = 2 * time.Second
		inner := mock.New(mock.Result{Value: "slow", Delay: time.Hour}, mock.OK("fast"))
		r := newRetry(t, inner, cfg)
		start := time.Now()
		out, err := r.Invoke(t.Context(), "q")
		if err != nil || out != "fast" {
			t.Fatalf("Invoke() = %v, %v, want fast, nil", out, err)
		}
		if got, want := time.Since(start), 3*time.Second; got != want {
			t.Errorf("took %v, want %v (2s timeout + 1s backoff)", got, want)
		}

		// When every attempt times out, the error says so.
		inner = mock.New(mock.Result{Delay: time.Hour})
		calls, _, err := invokeOnce(t, t.Context(), cfg, inner)
		wantOutcome(t, err, retry.OutcomeExhausted, 4)
		if !errors.Is(err, retry.ErrAttemptTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want it to match ErrAttemptTimeout and context.DeadlineExceeded", err)
		}
		if calls != 4 {
			t.Errorf("inner calls = %d, want 4", calls)
		}
	})
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

var _ net.Error = timeoutErr{}

// Rule 7: network timeouts, resets, refusals and unexpected EOFs.
func TestRule7NetworkErrors(t *testing.T) {
	for name, e := range map[string]error{
		"timeout":    &net.OpError{Op: "read", Err: timeoutErr{}},
		"reset":      &net.OpError{Op: "read", Err: syscall.ECONNRESET},
		"refused":    &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED},
		"unexpected": fmt.Errorf("body: %w", io.ErrUnexpectedEOF),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls, _, _ := invokeOnce(t, t.Context(), testConfig(), mock.New(mock.Fail(e), mock.OK("ok")))
				if calls != 2 {
					t.Errorf("inner calls = %d, want 2", calls)
				}
			})
		})
	}
}

// Rule 8: anything else is retried.
func TestRule8OtherErrorsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls, took, err := invokeOnce(t, t.Context(), testConfig(), mock.New(mock.Fail(errTransient)))
		wantOutcome(t, err, retry.OutcomeExhausted, 4)
		if calls != 4 {
			t.Errorf("inner calls = %d, want 4", calls)
		}
		if want := 7 * time.Second; took != want { // 1s + 2s + 4s
			t.Errorf("took %v, want %v", took, want)
		}
		if !errors.Is(err, errTransient) {
			t.Errorf("errors.Is(err, errTransient) = false, want true")
		}
	})
}

func TestNonIdempotentCalledOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Fail(&mock.HTTPError{Code: 503}))
		_, _, err := invokeOnce(t, t.Context(), testConfig(), inner)
		wantOutcome(t, err, retry.OutcomeExhausted, 4)

		inner = mock.New(mock.Fail(&mock.HTTPError{Code: 503}), mock.OK("sent"))
		r := newRetry(t, mock.NonIdempotent(inner), testConfig())
		_, err = r.Invoke(t.Context(), "email")
		wantOutcome(t, err, retry.OutcomeNotRetryable, 1)
		if got := inner.CallCount(); got != 1 {
			t.Errorf("inner calls = %d, want 1", got)
		}

		cfg := testConfig()
		cfg.RetryNonIdempotent = true
		inner = mock.New(mock.Fail(&mock.HTTPError{Code: 503}), mock.OK("sent"))
		r = newRetry(t, mock.NonIdempotent(inner), cfg)
		if out, err := r.Invoke(t.Context(), "email"); err != nil || out != "sent" {
			t.Errorf("with RetryNonIdempotent: Invoke() = %v, %v, want sent, nil", out, err)
		}
	})
}

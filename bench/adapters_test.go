package bench

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var testPolicy = Policy{Attempts: 4, Initial: 10 * time.Millisecond, Factor: 2, Max: 80 * time.Millisecond, Jitter: 0.1}

func retriers() []Retrier {
	return []Retrier{
		Steadfast("steadfast", testPolicy),
		Cenkalti(testPolicy),
		Avast(testPolicy),
		Sethvargo(testPolicy),
		Failsafe(testPolicy, 0),
	}
}

var errOverloaded = errors.New("overloaded")

func TestAdaptersMakeTheConfiguredAttempts(t *testing.T) {
	for _, r := range retriers() {
		t.Run(r.Name(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int64
				start := time.Now()
				err := r.Do(t.Context(), func(context.Context) error {
					calls.Add(1)
					return errOverloaded
				})
				if calls.Load() != 4 {
					t.Errorf("attempts = %d, want 4", calls.Load())
				}
				if !errors.Is(err, errOverloaded) {
					t.Errorf("error = %v, want the operation's error reachable", err)
				}
				// 10 + 20 + 40 ms of backoff, give or take the jitter.
				if took := time.Since(start); took < 55*time.Millisecond || took > 85*time.Millisecond {
					t.Errorf("took %v, want about 70ms", took)
				}
			})
		})
	}
}

func TestAdaptersSucceedAfterFailures(t *testing.T) {
	for _, r := range retriers() {
		t.Run(r.Name(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int64
				err := r.Do(t.Context(), func(context.Context) error {
					if calls.Add(1) <= 2 {
						return errOverloaded
					}
					return nil
				})
				if err != nil || calls.Load() != 3 {
					t.Errorf("Do() = %v after %d attempts, want nil after 3", err, calls.Load())
				}
			})
		})
	}
}

func TestAdaptersReturnPromptlyOnCancel(t *testing.T) {
	slow := Policy{Attempts: 4, Initial: time.Minute, Factor: 2, Max: time.Hour, Jitter: 0.1}
	for _, r := range []Retrier{Steadfast("steadfast", slow), Cenkalti(slow), Avast(slow), Sethvargo(slow), Failsafe(slow, 0)} {
		t.Run(r.Name(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				time.AfterFunc(time.Second, cancel)
				start := time.Now()
				_ = r.Do(ctx, func(context.Context) error { return errOverloaded })
				if took := time.Since(start); took != time.Second {
					t.Errorf("returned after %v, want at the cancellation (1s)", took)
				}
			})
		})
	}
}

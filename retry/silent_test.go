package retry_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/route"
	"github.com/steadfast-go/steadfast/retry"
)

// status503 is an answer with a status: the route is not silent.
type status503 struct{}

func (status503) Error() string   { return "503 after a long wait" }
func (status503) StatusCode() int { return 503 }

// after returns a Runnable that fails with err after wait, or when its
// context ends first, with the context's error; calls counts its calls.
func after(wait time.Duration, err error, calls *int) core.Runnable {
	return core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		*calls++
		select {
		case <-time.After(wait):
			return nil, err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
}

// A route that sends nothing before the attempt's timeout, or closes the
// connection with no status after a long wait, ends the call after one
// attempt, outcome and error.type silent_timeout, while another route can
// serve it (a fallback marks the context); a failure that is an answer or
// a quick close is not silent, but a second in a row ends the route's
// turn (routeturn_test.go); with no other route, retrying is as it was.
func TestASilentRouteIsNotRetriedWhileAnotherCanServe(t *testing.T) {
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: time.Second, PerAttemptTimeout: 30 * time.Second}
	for _, tc := range []struct {
		name        string
		wait        time.Duration
		err         error
		alternative bool
		outcome     retry.Outcome
		attempts    int
	}{
		{name: "no answer in time", wait: time.Hour, alternative: true, outcome: retry.OutcomeSilentTimeout, attempts: 1},
		{name: "closed after 15s", wait: 15 * time.Second, err: io.EOF, alternative: true, outcome: retry.OutcomeSilentTimeout, attempts: 1},
		// not silent, but a route that fails twice in a row: its turn ends after one retry (#71)
		{name: "closed at once", wait: time.Second, err: io.EOF, alternative: true, outcome: retry.OutcomeExhausted, attempts: 2},
		{name: "a status after 15s", wait: 15 * time.Second, err: status503{}, alternative: true, outcome: retry.OutcomeExhausted, attempts: 2},
		{name: "a permanent failure", wait: 15 * time.Second, err: retry.Permanent(io.EOF), alternative: true, outcome: retry.OutcomeNotRetryable, attempts: 1},
		{name: "no other route", wait: time.Hour, outcome: retry.OutcomeExhausted, attempts: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				r := newRetry(t, after(tc.wait, tc.err, &calls), cfg)
				ctx := t.Context()
				if tc.alternative {
					ctx = route.WithAlternative(ctx)
				}
				_, err := r.Invoke(ctx, "q")
				re, ok := errors.AsType[*retry.Error](err)
				if !ok || re.Outcome != tc.outcome || re.Attempts != tc.attempts || calls != tc.attempts {
					t.Fatalf("Invoke() = %v after %d calls, want %s after %d", err, calls, tc.outcome, tc.attempts)
				}
				if tc.outcome == retry.OutcomeSilentTimeout && retry.ErrorType(err) != "silent_timeout" {
					t.Errorf("error.type = %q, want silent_timeout", retry.ErrorType(err))
				}
			})
		})
	}
}

// A stream whose first chunk does not come within FirstChunkTimeout is a
// silent route too.
func TestASilentStreamIsNotRetriedWhileAnotherCanServe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		inner := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
			calls++
			<-ctx.Done()
			return nil, ctx.Err()
		})
		cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: time.Second, FirstChunkTimeout: 20 * time.Second}
		ch, err := newRetry(t, inner, cfg).Stream(route.WithAlternative(t.Context()), "q")
		if err != nil {
			t.Fatal(err)
		}
		var last any
		for v := range ch {
			last = v
		}
		re, ok := last.(*retry.Error)
		if !ok || re.Outcome != retry.OutcomeSilentTimeout || re.Attempts != 1 || calls != 1 {
			t.Fatalf("stream's last value = %v after %d calls, want silent_timeout after 1", last, calls)
		}
	})
}

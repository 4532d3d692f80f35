package retry_test

import (
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/internal/route"
	"github.com/steadfast-go/steadfast/retry"
)

// Inside a route with another that can serve the call (route.WithAlternative,
// as a fallback marks it), a failure that says the route is bad, a second
// time in a row, ends the route's turn after one retry: outcome exhausted,
// the failure classified as it was. A 429 or 503 with a short Retry-After
// is the provider pacing the call, and is retried as ever; a 400 is not
// retried at all; with no other route, every retry is made (#71).
func TestABrokenRouteCostsOneRetry(t *testing.T) {
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: time.Second}
	for _, tc := range []struct {
		name        string
		script      []mock.Result
		alternative bool
		outcome     retry.Outcome
		attempts    int
	}{
		{"503s", []mock.Result{mock.Fail(&mock.HTTPError{Code: 503})}, true, retry.OutcomeExhausted, 2},
		{"429s with no Retry-After", []mock.Result{mock.Fail(&mock.HTTPError{Code: 429})}, true, retry.OutcomeExhausted, 2},
		{"429s with a Retry-After of 5 s", []mock.Result{mock.Fail(&mock.HTTPError{Code: 429, After: 5 * time.Second})}, true, retry.OutcomeExhausted, 2},
		{"connections cut", []mock.Result{mock.Fail(io.ErrUnexpectedEOF)}, true, retry.OutcomeExhausted, 2},
		{"429s with a Retry-After of 200 ms", []mock.Result{mock.Fail(&mock.HTTPError{Code: 429, After: 200 * time.Millisecond})}, true, retry.OutcomeExhausted, 4},
		{"a short hint between two 503s", []mock.Result{mock.Fail(&mock.HTTPError{Code: 503}), mock.Fail(&mock.HTTPError{Code: 503, After: 100 * time.Millisecond}),
			mock.Fail(&mock.HTTPError{Code: 503}), mock.OK("answer")}, true, "", 4},
		{"a 503 then an answer", []mock.Result{mock.Fail(&mock.HTTPError{Code: 503}), mock.OK("answer")}, true, "", 2},
		{"a 400", []mock.Result{mock.Fail(&mock.HTTPError{Code: 400})}, true, retry.OutcomeNotRetryable, 1},
		{"503s with no other route", []mock.Result{mock.Fail(&mock.HTTPError{Code: 503})}, false, retry.OutcomeExhausted, 4},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: ", Invoke", true: ", Stream"}[stream], func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					m := mock.New(tc.script...)
					r := newRetry(t, m, cfg)
					ctx := t.Context()
					if tc.alternative {
						ctx = route.WithAlternative(ctx)
					}
					var err error
					if stream {
						var ch <-chan any
						if ch, err = r.Stream(ctx, "q"); err == nil {
							for v := range ch {
								if e, ok := v.(error); ok {
									err = e
								}
							}
						}
					} else {
						_, err = r.Invoke(ctx, "q")
					}
					if tc.outcome == "" {
						if err != nil || m.CallCount() != tc.attempts {
							t.Fatalf("err %v after %d calls, want an answer after %d", err, m.CallCount(), tc.attempts)
						}
						return
					}
					re, ok := errors.AsType[*retry.Error](err)
					if !ok || re.Outcome != tc.outcome || re.Attempts != tc.attempts || m.CallCount() != tc.attempts {
						t.Fatalf("err %v after %d calls, want %s after %d", err, m.CallCount(), tc.outcome, tc.attempts)
					}
					if got, want := retry.ClassOf(err), retry.ClassOf(tc.script[len(tc.script)-1].Err); got != want {
						t.Errorf("class %s, want %s: the route's turn keeps the failure's class", got, want)
					}
				})
			})
		}
	}
}

package retry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/internal/route"
	"github.com/steadfast-go/steadfast/retry"
)

// Inside a route with another that can serve the call (route.WithAlternative,
// as a fallback marks it), a failure that says the route is bad, a second
// time in a row, ends the route's turn after one retry: outcome exhausted,
// the failure classified as it was; one with a Retry-After over a second
// ends it at once (the route said it will not serve for that long, and
// another serves now). A 429 or 503 with a short Retry-After
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
		{"429s with a Retry-After of 5 s", []mock.Result{mock.Fail(&mock.HTTPError{Code: 429, After: 5 * time.Second})}, true, retry.OutcomeExhausted, 1},
		{"429s with a Retry-After of 5 s, no other route", []mock.Result{mock.Fail(&mock.HTTPError{Code: 429, After: 5 * time.Second})}, false, retry.OutcomeExhausted, 4},
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

// A malformed event, or a stall after the first chunk, says at once that
// the route is broken: with another route to serve the call, its turn
// ends at the first one (a stall as silent_timeout, whatever the stream
// had sent), with no restart on it; alone, the stream restarts as ever
// (#71). Before the first chunk, a malformed event ends the turn as
// exhausted (TestAGarbledFirstEventEndsTheTurn).
func TestAGarbledOrQuietRouteEndsItsTurnAtOnce(t *testing.T) {
	garbled := &json.SyntaxError{Offset: 44}
	for _, tc := range []struct {
		name        string
		first       mock.Result
		alternative bool
		outcome     retry.Outcome
		streams     int
	}{
		{"malformed event", mock.Stream(fmt.Errorf("decoding event: %w", garbled), 1, 2), true, retry.OutcomeCommitted, 1},
		{"stall", mock.Result{Chunks: []any{1, 2, 3}, ChunkDelay: time.Minute}, true, retry.OutcomeSilentTimeout, 1},
		{"malformed event, alone", mock.Stream(garbled, 1, 2), false, "", 2},
		{"stall, alone", mock.Result{Chunks: []any{1, 2, 3}, ChunkDelay: time.Minute}, false, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := mock.New(tc.first, mock.Stream(nil, 1, 2, 3))
				r := newRetry(t, inner, restartingConfig())
				ctx := t.Context()
				if tc.alternative {
					ctx = route.WithAlternative(ctx)
				}
				ch, err := r.Stream(ctx, "q", core.WithResets())
				if err != nil {
					t.Fatal(err)
				}
				got := mock.Drain(ch)
				shape, _ := resets(got)
				if inner.CallCount() != tc.streams {
					t.Errorf("inner streams = %d, want %d", inner.CallCount(), tc.streams)
				}
				if tc.outcome == "" {
					if shape[len(shape)-1] != 3 {
						t.Fatalf("stream = %v, want the restarted answer", shape)
					}
					return
				}
				re, ok := got[len(got)-1].(*retry.Error)
				if !ok || re.Outcome != tc.outcome || re.Attempts != 1 || shape[0] != 1 {
					t.Fatalf("stream = %v, last %v; want the partial answer, then %s after 1 attempt", shape, got[len(got)-1], tc.outcome)
				}
			})
		})
	}
}

func TestAGarbledFirstEventEndsTheTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Stream(&json.SyntaxError{Offset: 3}), mock.Stream(nil, 1))
		ch, err := newRetry(t, inner, streamConfig()).Stream(route.WithAlternative(t.Context()), "q")
		if err != nil {
			t.Fatal(err)
		}
		got := mock.Drain(ch)
		re, ok := got[len(got)-1].(*retry.Error)
		if !ok || len(got) != 1 || re.Outcome != retry.OutcomeExhausted || inner.CallCount() != 1 {
			t.Fatalf("stream = %v after %d streams, want exhausted after 1", got, inner.CallCount())
		}
	})
}

// slowOpen is a Runnable whose Stream takes open to return (a provider's
// headers), or until its context ends, and then streams as inner does.
type slowOpen struct {
	*mock.Runnable
	open time.Duration
}

func (s slowOpen) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	select {
	case <-time.After(s.open):
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	return s.Runnable.Stream(ctx, in, opts...)
}

// FirstChunkTimeout counts from the request, not from the stream's
// creation: a route that sends no headers is found out within it, as is
// one whose headers and first chunk together take longer (#71).
func TestFirstChunkTimeoutCountsFromTheRequest(t *testing.T) {
	cfg := streamConfig()
	cfg.PerAttemptTimeout, cfg.FirstChunkTimeout = 30*time.Second, 2*time.Second
	for _, tc := range []struct {
		name     string
		open     time.Duration
		first    time.Duration // the first chunk's wait after the creation
		silentAt time.Duration // with another route, the call ends then; 0: the answer comes
	}{
		{"no headers", time.Hour, 0, 2 * time.Second},
		{"headers after 1.5 s, a chunk 1 s later", 1500 * time.Millisecond, time.Second, 2 * time.Second},
		{"headers after 1 s, a chunk 0.5 s later", time.Second, 500 * time.Millisecond, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := slowOpen{mock.New(mock.Result{Chunks: []any{1}, Delay: tc.first}), tc.open}
				start := time.Now()
				ch, err := newRetry(t, inner, cfg).Stream(route.WithAlternative(t.Context()), "q")
				var last any
				if err == nil {
					got := mock.Drain(ch)
					last = got[len(got)-1]
				} else {
					last = err
				}
				if tc.silentAt == 0 {
					if last != 1 {
						t.Fatalf("stream ended with %v, want the answer", last)
					}
					return
				}
				re, ok := last.(*retry.Error)
				if !ok || re.Outcome != retry.OutcomeSilentTimeout || re.Attempts != 1 || !errors.Is(re, retry.ErrAttemptTimeout) {
					t.Fatalf("stream ended with %v, want silent_timeout after 1 attempt, matching ErrAttemptTimeout", last)
				}
				if took := time.Since(start); took != tc.silentAt {
					t.Errorf("it ended after %v, want %v", took, tc.silentAt)
				}
			})
		})
	}
}

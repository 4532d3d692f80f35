package retry_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
)

// Every call records how long it took, its attempts and the time between
// them, and every attempt how long it took (a stream's, its first chunk
// too), in virtual time exactly: a call that fails twice, each attempt
// taking 2 s, with backoffs of 1 s and 2 s, took 9 s, 3 attempts and 3 s
// between them (#72).
func TestDurations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		e503 := &mock.HTTPError{Code: 503}
		slow := func(r mock.Result) mock.Result { r.Delay = 2 * time.Second; return r }
		inner := mock.New(slow(mock.Fail(e503)), slow(mock.Fail(e503)), slow(mock.OK("ok")))
		r := newRetry(t, inner, testConfig(), rec.options()...)
		if _, err := r.Invoke(t.Context(), "q", core.WithOperation("llm")); err != nil {
			t.Fatal(err)
		}
		m := rec.points(t)
		ok := "retry.method=invoke,retry.operation=llm,retry.outcome=success"
		for name, want := range map[string]string{
			"retry.call.duration": "count=1 sum=9",
			"retry.call.attempts": "count=1 sum=3",
			"retry.call.delay":    "count=1 sum=3",
		} {
			if got := m[name][ok]; got != want {
				t.Errorf("%s = %v, want %s at %s", name, m[name], want, ok)
			}
		}
		attempt := m["retry.attempt.duration"]
		if got, failed := attempt["retry.method=invoke,retry.operation=llm"], attempt["error.type=503,retry.method=invoke,retry.operation=llm"]; got != "count=1 sum=2" || failed != "count=2 sum=4" {
			t.Errorf("retry.attempt.duration = %v, want one success of 2 s and two 503s of 2 s", attempt)
		}
		if len(m["retry.attempt.time_to_first_chunk"]) != 0 {
			t.Errorf("retry.attempt.time_to_first_chunk = %v for an Invoke, want none", m["retry.attempt.time_to_first_chunk"])
		}
	})
	t.Run("stream", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := newRecorder()
			inner := mock.New(mock.Result{Chunks: []any{1, 2, 3}, Delay: 700 * time.Millisecond, ChunkDelay: time.Second})
			ch, err := newRetry(t, inner, streamConfig(), rec.options()...).Stream(t.Context(), "q")
			if err != nil {
				t.Fatal(err)
			}
			mock.Drain(ch)
			m := rec.points(t)
			if got := m["retry.attempt.time_to_first_chunk"]["retry.method=stream"]; got != "count=1 sum=0.7" {
				t.Errorf("retry.attempt.time_to_first_chunk = %v, want one of 0.7 s", m["retry.attempt.time_to_first_chunk"])
			}
			if got := m["retry.call.duration"]["retry.method=stream,retry.outcome=success"]; got != "count=1 sum=2.7" {
				t.Errorf("retry.call.duration = %v, want one of 2.7 s (the stream's end)", m["retry.call.duration"])
			}
		})
	})
}

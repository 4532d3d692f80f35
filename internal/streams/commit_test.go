package streams

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// slowEnder is a Committer whose Ended takes a second of virtual time to
// record the call's end, as a span exporter or a metrics hook may.
type slowEnder struct {
	next   error // what Next and Resume answer
	ended  bool
	result Result
}

func (p *slowEnder) Next(context.Context, error) (Source, error) { return Source{}, p.next }
func (p *slowEnder) Committed(context.Context)                   {}
func (p *slowEnder) Resume(context.Context, error, any) (Source, error) {
	return Source{}, p.next
}
func (p *slowEnder) Ended(_ context.Context, r Result) {
	time.Sleep(time.Second)
	p.ended, p.result = true, r
}
func (p *slowEnder) Unwound(context.Context, any, int) (error, bool) { return nil, false }

// TestEndedIsRecordedBeforeTheLastErrorIsDelivered: a consumer that has
// the stream's last error value (a fallback that moves on at once, a retry
// that tries again) finds the call's end recorded.
func TestEndedIsRecordedBeforeTheLastErrorIsDelivered(t *testing.T) {
	boom, gaveUp := errors.New("boom"), errors.New("no more attempts")
	for _, tc := range []struct {
		name   string
		values []any
		resume bool
		want   End
		last   error
	}{
		{"gave up before the commit", []any{boom}, false, GaveUp, gaveUp},
		{"failed after the commit", []any{"a", boom}, false, Failed, boom},
		{"resume gave up", []any{"a", boom}, true, Failed, gaveUp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &slowEnder{next: gaveUp}
				src := Source{C: feed(tc.values...), Cancel: func(error) {}}
				out := Forward(t.Context(), src, p, Config{Abandon: func(err error) error { return err }, Resume: tc.resume})
				var last any
				for v := range out {
					if err, ok := v.(error); ok {
						if !p.ended {
							t.Fatalf("the consumer has the last error %v before Ended ran", err)
						}
						last = err
					}
				}
				if last != tc.last || p.result.End != tc.want {
					t.Errorf("last value %v, Ended with %v; want %v and %v", last, p.result.End, tc.last, tc.want)
				}
			})
		})
	}
}

// panicEnder's Ended records the end and then panics, as a hook may.
type panicEnder struct{ slowEnder }

func (p *panicEnder) Ended(context.Context, Result) { p.ended = true; panic("hook") }

// TestAPanicInEndedStillDeliversTheLastError: the consumer never mistakes
// a failed stream for one that completed.
func TestAPanicInEndedStillDeliversTheLastError(t *testing.T) {
	boom := errors.New("boom")
	p := &panicEnder{slowEnder{next: boom}}
	src := Source{C: feed(boom), Cancel: func(error) {}}
	var got []any
	for v := range Forward(t.Context(), src, p, Config{Abandon: func(err error) error { return err }}) {
		got = append(got, v)
	}
	if len(got) != 1 || got[0] != boom {
		t.Errorf("values %v, want only %v", got, boom)
	}
}

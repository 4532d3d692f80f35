package breaker_test

import (
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/internal/mock"
)

// events returns the names and the from/to or state attributes of the
// breaker's events on span.
func events(span sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, ev := range span.Events() {
		s := ev.Name
		for _, kv := range ev.Attributes {
			switch kv.Key {
			case attribute.Key("breaker.from"), attribute.Key("breaker.to"), attribute.Key("breaker.state"):
				s += " " + kv.Value.AsString()
			}
		}
		out = append(out, s)
	}
	return out
}

// The call whose failure opens the circuit, the call that finds it open
// and the probe that closes it each carry on their span what happened,
// read from the queue of changes, not from State.
func TestStateChangesAreOnTheSpanOfTheCallThatMadeThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("test")
		inner := mock.New(mock.Fail(errDown), mock.Fail(errDown), mock.Fail(errDown), mock.OK("back"))
		b := newBreaker(t, inner)
		call := func() {
			ctx, span := tracer.Start(t.Context(), "call", trace.WithNewRoot())
			_, _ = b.Invoke(ctx, "q")
			span.End()
		}
		for range 4 { // three failures, the third opens it; the fourth is rejected
			call()
		}
		time.Sleep(10*time.Second + time.Millisecond)
		call() // the probe: open -> half-open at its admission, half-open -> closed at its report
		spans := rec.Ended()
		want := [][]string{nil, nil, {"breaker.state_change closed open"}, {"breaker.rejected open"},
			{"breaker.state_change half-open closed"}}
		for i, w := range want {
			got := events(spans[i])
			if len(got) != len(w) || (len(w) > 0 && got[0] != w[0]) {
				t.Errorf("call %d: events %q, want %q", i+1, got, w)
			}
		}
	})
}

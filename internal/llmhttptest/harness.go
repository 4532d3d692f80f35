package llmhttptest

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// Harness is a RetryRunnable over a real SDK client that talks to a
// scripted Server, with the spans it records. When the test ends it checks
// that the Server received one request per attempt (per item attempt, for
// Batch) recorded in telemetry.
type Harness struct {
	Server *Server
	Spans  *tracetest.SpanRecorder
	R      *retry.RetryRunnable
	// Sendless marks a case whose attempts fail before any request.
	Sendless bool
}

// Config is the retry policy of a Harness: 3 attempts, 1s doubling.
var Config = retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: 10 * time.Second}

// NewHarness builds the Runnable with newRunnable from an HTTP client the
// Server answers, and wraps it in a RetryRunnable under Config.
func NewHarness(t *testing.T, newRunnable func(*http.Client) core.Runnable, script ...Reply) *Harness {
	t.Helper()
	h := &Harness{Server: New(script...), Spans: tracetest.NewSpanRecorder()}
	var err error
	h.R, err = retry.New(newRunnable(h.Server.Client()), Config,
		retry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.Spans))),
		retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		attempts := 0
		for _, s := range h.Spans.Ended() {
			if s.Name() != "retry.attempt" {
				continue
			}
			n := 1
			for _, kv := range s.Attributes() {
				if kv.Key == attribute.Key("retry.batch.items") {
					n = int(kv.Value.AsInt64())
				}
			}
			attempts += n
		}
		if h.Sendless {
			attempts = 0
		}
		if got := h.Server.Requests(); got != attempts {
			t.Errorf("HTTP requests = %d, attempts in telemetry = %d: want them equal", got, attempts)
		}
	})
	return h
}

// CallSpan returns the attributes of the ended call span.
func (h *Harness) CallSpan(t *testing.T) map[string]string {
	t.Helper()
	for _, s := range h.Spans.Ended() {
		switch s.Name() {
		case "retry.invoke", "retry.batch", "retry.stream":
			m := map[string]string{}
			for _, kv := range s.Attributes() {
				m[string(kv.Key)] = kv.Value.String()
			}
			return m
		}
	}
	t.Fatal("no call span ended")
	return nil
}

// AttemptSpans returns the attributes of the ended attempt spans, in end
// order, as their emitted strings.
func (h *Harness) AttemptSpans() []map[string]string {
	var out []map[string]string
	for _, s := range h.Spans.Ended() {
		if s.Name() == "retry.attempt" {
			m := map[string]string{}
			for _, kv := range s.Attributes() {
				m[string(kv.Key)] = kv.Value.String()
			}
			out = append(out, m)
		}
	}
	return out
}

// Drain reads a stream to its end and returns the text of its chunks, as
// the provider's text function reads them, joined, and its last value.
func Drain(ch <-chan any, text func(any) string) (joined string, last any) {
	for v := range ch {
		joined += text(v)
		last = v
	}
	return joined, last
}

// WantOutcome checks that err is a *retry.Error with the given outcome,
// after the given number of HTTP requests, and returns it.
func (h *Harness) WantOutcome(t *testing.T, err error, outcome retry.Outcome, requests int) *retry.Error {
	t.Helper()
	re, ok := errors.AsType[*retry.Error](err)
	if !ok {
		t.Fatalf("error = %v, want a *retry.Error", err)
	}
	if re.Outcome != outcome || h.Server.Requests() != requests {
		t.Errorf("outcome %s after %d requests, want %s after %d (err: %v)", re.Outcome, h.Server.Requests(), outcome, requests, err)
	}
	return re
}

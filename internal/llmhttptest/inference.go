package llmhttptest

import (
	"context"
	"io"
	"strings"
	"testing"
	"testing/synctest"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// CheckInference checks, through the provider's real SDK, the GenAI
// conventions' mode (retry.WithGenAIConventions): each request a retry
// layer's attempt sends is a CLIENT span named span ("chat gpt-4o-mini"),
// child of its attempt span; a stream cut after its first chunk says
// finish reason "error" and error.type, its restart carries
// http.request.resend_count 1 and gen_ai.request.stream; an Invoke
// answered 503 twice is two failed inferences; the call spans carry no
// gen_ai.*; and the inference metrics count each request (#72).
func CheckInference(t *testing.T, p Restarts, span string) {
	t.Run("stream", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := newInferenceRecorder()
			cut := p.stream(40, false)
			cut.BreakAfter = io.ErrUnexpectedEOF
			r := rec.retry(t, p, RestartConfig, New(cut, p.stream(answerTokens, true)))
			ch, err := r.Stream(t.Context(), "Say hello", core.WithResets())
			if err != nil {
				t.Fatal(err)
			}
			for range ch {
			}
			spans := rec.inferences(t, span, 2)
			first, second := attrsOf(spans[0]), attrsOf(spans[1])
			if first["gen_ai.response.finish_reasons"] != `["error"]` || first["error.type"] == "" || first["gen_ai.request.stream"] != "true" {
				t.Errorf("the cut stream's inference = %v, want finish reason error, an error.type, gen_ai.request.stream", first)
			}
			if second["http.request.resend_count"] != "1" || second["error.type"] != "" || second["gen_ai.response.finish_reasons"] == `["error"]` {
				t.Errorf("the restart's inference = %v, want a resend count of 1, no error", second)
			}
			if got := rec.count(t, "gen_ai.client.inference.time_to_first_chunk"); got != 2 {
				t.Errorf("time_to_first_chunk recorded %d times, want 2", got)
			}
			rec.noGenAIOn(t, "retry.stream")
		})
	})
	t.Run("invoke", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := newInferenceRecorder()
			overloaded := JSON(503, `{"error":{"message":"overloaded","type":"server_error"}}`)
			cfg := RouteConfig
			cfg.MaxRetries = 1
			r := rec.retry(t, p, cfg, New(overloaded, overloaded))
			if _, err := r.Invoke(t.Context(), "Say hello"); err == nil {
				t.Fatal("Invoke() succeeded on two 503s")
			}
			spans := rec.inferences(t, span, 2)
			if a := attrsOf(spans[0]); a["error.type"] == "" || a["http.request.resend_count"] != "" {
				t.Errorf("the first inference = %v, want an error.type and no resend count", a)
			}
			if a := attrsOf(spans[1]); a["http.request.resend_count"] != "1" {
				t.Errorf("the resend's inference = %v, want http.request.resend_count 1", a)
			}
			if got := rec.count(t, "gen_ai.client.inference.duration"); got != 2 {
				t.Errorf("gen_ai.client.inference.duration recorded %d times, want 2", got)
			}
			rec.noGenAIOn(t, "retry.invoke")
		})
	})
}

// inferenceRecorder is an OpenTelemetry SDK whose spans and metrics
// CheckInference reads.
type inferenceRecorder struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newInferenceRecorder() *inferenceRecorder {
	return &inferenceRecorder{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
}

func (rec *inferenceRecorder) retry(t *testing.T, p Restarts, cfg retry.RetryConfig, server *Server) core.Runnable {
	t.Helper()
	r, err := retry.New(p.New(server.Client()), cfg, retry.WithGenAIConventions(),
		retry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec.spans))),
		retry.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(rec.reader))))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// inferences returns the n inference spans named name, each checked to be
// a CLIENT span under an attempt span.
func (rec *inferenceRecorder) inferences(t *testing.T, name string, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	attempts := map[trace.SpanID]bool{}
	var out []sdktrace.ReadOnlySpan
	var names []string
	for _, s := range rec.spans.Ended() {
		names = append(names, s.Name())
		if s.Name() == "retry.attempt" {
			attempts[s.SpanContext().SpanID()] = true
		}
	}
	for _, s := range rec.spans.Ended() {
		if s.Name() != name {
			continue
		}
		if s.SpanKind() != trace.SpanKindClient || !attempts[s.Parent().SpanID()] {
			t.Errorf("inference span %s: kind %v, parent an attempt %v; want a client span under an attempt", name, s.SpanKind(), attempts[s.Parent().SpanID()])
		}
		out = append(out, s)
	}
	if len(out) != n {
		t.Fatalf("%d %q spans, want %d (spans: %v)", len(out), name, n, names)
	}
	return out
}

// noGenAIOn fails when the span named name carries a gen_ai.* attribute.
func (rec *inferenceRecorder) noGenAIOn(t *testing.T, name string) {
	t.Helper()
	for _, s := range rec.spans.Ended() {
		if s.Name() != name {
			continue
		}
		for k := range attrsOf(s) {
			if strings.HasPrefix(k, "gen_ai.") {
				t.Errorf("the call span %s carries %s: a backend would count the call as an inference too", name, k)
			}
		}
	}
}

// count returns how many values the histogram named name recorded.
func (rec *inferenceRecorder) count(t *testing.T, name string) uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := rec.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == name {
				for _, p := range h.DataPoints {
					n += p.Count
				}
			}
		}
	}
	return n
}

func attrsOf(s sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

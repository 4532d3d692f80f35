package anthropic_test

import (
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/anthropic"
	"github.com/steadfast-go/steadfast/retry"
)

// messagesOn is a Messages of the scripted server.
func messagesOn(srv *llmhttptest.Server) *anthropic.Messages {
	return anthropic.NewMessages(model, option.WithAPIKey("test-key"), option.WithBaseURL("http://anthropic.test/"), option.WithHTTPClient(srv.Client()))
}

// tokensOf streams "Say hello" through r and returns the call span's
// retry.tokens attributes.
func tokensOf(t *testing.T, spans *tracetest.SpanRecorder, stream func() (<-chan any, error)) (string, map[string]int64) {
	t.Helper()
	ch, err := stream()
	if err != nil {
		t.Fatal(err)
	}
	text, _ := llmhttptest.Drain(ch, anthropic.Text)
	got := map[string]int64{}
	for _, s := range spans.Ended() {
		if s.Name() != "retry.stream" {
			continue
		}
		for _, kv := range s.Attributes() {
			if kv.Value.Type() == attribute.INT64 {
				got[string(kv.Key)] = kv.Value.AsInt64()
			}
		}
	}
	return text, got
}

func traced(spans *tracetest.SpanRecorder) []retry.Option {
	return []retry.Option{retry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))),
		retry.WithMeterProvider(noop.NewMeterProvider())}
}

var tokensCfg = retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}

// A stream whose connection broke after message_start said what its input
// cost, before any text: its 3 input tokens are thrown away, the next
// attempt's delivered; the sums are what the SDK reported.
func TestTokensOfAStreamBrokenAfterItsUsage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		broken := llmhttptest.SSE(start())
		broken.BreakAfter = io.ErrUnexpectedEOF
		srv := llmhttptest.New(broken, llmhttptest.SSE(start(), delta("Hel"), delta("lo"), messageDelta(), stop()))
		spans := tracetest.NewSpanRecorder()
		r, err := retry.New(messagesOn(srv), tokensCfg, traced(spans)...)
		if err != nil {
			t.Fatal(err)
		}
		text, got := tokensOf(t, spans, func() (<-chan any, error) { return r.Stream(t.Context(), "Say hello") })
		want := map[string]int64{"retry.tokens.input": 6, "retry.tokens.output": 2, "retry.tokens.discarded": 3}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %d, want %d (text %q)", k, got[k], v, text)
			}
		}
	})
}

// A fallback's first candidate that failed in-band after message_start is
// thrown away; the second candidate's answer is delivered.
func TestTokensOfAFallbackCandidate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := llmhttptest.New(llmhttptest.SSE(start(), event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)))
		second := llmhttptest.New(llmhttptest.SSE(start(), delta("Hi"), messageDelta(), stop()))
		f, err := fallback.New([]core.Runnable{messagesOn(first), messagesOn(second)}, fallback.WithSwitchOn("overloaded_error"))
		if err != nil {
			t.Fatal(err)
		}
		spans := tracetest.NewSpanRecorder()
		r, err := retry.New(f, tokensCfg, traced(spans)...)
		if err != nil {
			t.Fatal(err)
		}
		text, got := tokensOf(t, spans, func() (<-chan any, error) { return r.Stream(t.Context(), "Say hello") })
		if text != "Hi" || got["retry.tokens.input"] != 6 || got["retry.tokens.output"] != 2 || got["retry.tokens.discarded"] != 3 {
			t.Errorf("stream %q, tokens %v; want Hi, 6 in, 2 out, 3 thrown away (the first candidate's)", text, got)
		}
	})
}

// MaxRetryTokens ends a stream whose attempts keep failing after their
// input was billed: after the attempt that reached it.
func TestMaxRetryTokensStopsAStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		overloaded := llmhttptest.SSE(start(), event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
		srv := llmhttptest.New(overloaded, overloaded, overloaded, overloaded)
		cfg := tokensCfg
		cfg.MaxRetryTokens = 7 // 3 input tokens an attempt: the third reaches it
		r, err := retry.New(messagesOn(srv), cfg)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := r.Stream(t.Context(), "Say hello")
		if err != nil {
			t.Fatal(err)
		}
		_, last := llmhttptest.Drain(ch, anthropic.Text)
		err, _ = last.(error)
		var re *retry.Error
		if !errors.As(err, &re) || re.Outcome != retry.OutcomeRetryTokensExhausted || re.Attempts != 3 || srv.Requests() != 3 {
			t.Errorf("Stream() = %v after %d requests, want retry_tokens_exhausted after 3", err, srv.Requests())
		}
	})
}

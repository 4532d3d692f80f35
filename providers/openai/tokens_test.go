package openai_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3/option"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadfast-go/steadfast/hedge"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// billedCompletion is a Chat answer whose usage says what it cost.
func billedCompletion(text string, prompt, completion int) llmhttptest.Reply {
	return llmhttptest.JSON(200, fmt.Sprintf(`{"id":"c1","object":"chat.completion","created":1,"model":%q,
		"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],
		"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, model, text, prompt, completion, prompt+completion))
}

// billedChunk is a Chat stream's final chunk: no choices, the usage.
func billedChunk(prompt, completion int) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":%q,"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		model, prompt, completion, prompt+completion)
}

// telemetry is an OpenTelemetry SDK whose call spans and retry.tokens
// points a test reads.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newTelemetry() *telemetry {
	return &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
}

func (tel *telemetry) options() []retry.Option {
	return []retry.Option{retry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))),
		retry.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader)))}
}

// tokens returns the call span's retry.tokens attributes and the
// retry.tokens points by fate, as "name=value" strings.
func (tel *telemetry) tokens(t *testing.T, span string) (attrs, fates string) {
	t.Helper()
	a := map[string]int64{}
	for _, s := range tel.spans.Ended() {
		if s.Name() == span {
			for _, kv := range s.Attributes() {
				if kv.Value.Type() == attribute.INT64 && len(kv.Key) > 13 && kv.Key[:13] == "retry.tokens." {
					a[string(kv.Key)] = kv.Value.AsInt64()
				}
			}
		}
	}
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	f := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "retry.tokens" {
				for _, p := range sum.DataPoints {
					fate, _ := p.Attributes.Value("retry.token.fate")
					f[fate.AsString()] = p.Value
				}
			}
		}
	}
	return fmt.Sprint(a), fmt.Sprint(f)
}

// An answer CheckOutput rejected was billed, through openai-go, and
// thrown away; the second answer was delivered.
func TestTokensOfARejectedChatAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := llmhttptest.New(billedCompletion("short", 120, 4), billedCompletion("a full answer", 120, 30))
		cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond,
			CheckOutput: func(_ context.Context, _, out any) error {
				if openai.Text(out) == "short" {
					return errors.New("too short")
				}
				return nil
			}}
		tel := newTelemetry()
		r, err := retry.New(openai.NewChat(model, option.WithAPIKey("k"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(srv.Client())), cfg, tel.options()...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Invoke(t.Context(), "Say hello"); err != nil {
			t.Fatal(err)
		}
		attrs, fates := tel.tokens(t, "retry.invoke")
		if attrs != "map[retry.tokens.discarded:124 retry.tokens.input:240 retry.tokens.output:34]" || fates != "map[delivered:150 discarded:124]" {
			t.Errorf("call span %s, retry.tokens %s; want 240 in, 34 out, 124 thrown away", attrs, fates)
		}

		// With MaxRetryTokens below the rejected answer's cost: no second
		// request.
		srv = llmhttptest.New(billedCompletion("short", 120, 4), billedCompletion("a full answer", 120, 30))
		cfg.MaxRetryTokens = 100
		if r, err = retry.New(openai.NewChat(model, option.WithAPIKey("k"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(srv.Client())), cfg); err != nil {
			t.Fatal(err)
		}
		_, err = r.Invoke(t.Context(), "Say hello")
		var re *retry.Error
		if !errors.As(err, &re) || re.Outcome != retry.OutcomeRetryTokensExhausted || srv.Requests() != 1 {
			t.Errorf("Invoke() = %v after %d requests, want retry_tokens_exhausted after 1", err, srv.Requests())
		}
	})
}

// A hedge over a Chat stream: the first request's stream reported its
// usage, then failed before any text; the hedge that won was delivered,
// the first thrown away.
func TestTokensOfAHedgedChatStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := llmhttptest.New(
			llmhttptest.SSE(billedChunk(80, 0), `{"error":{"message":"The server is overloaded","type":"server_error","code":null}}`),
			llmhttptest.SSE(chunk("Hel"), chunk("lo"), billedChunk(80, 2), "[DONE]"))
		h, err := hedge.New(openai.NewChat(model, option.WithAPIKey("k"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(srv.Client())),
			hedge.Config{Delay: time.Second, MaxHedges: 1})
		if err != nil {
			t.Fatal(err)
		}
		tel := newTelemetry()
		r, err := retry.New(h, retry.RetryConfig{MaxRetries: 1, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}, tel.options()...)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := r.Stream(t.Context(), "Say hello")
		if err != nil {
			t.Fatal(err)
		}
		text, _ := llmhttptest.Drain(ch, openai.Text)
		attrs, fates := tel.tokens(t, "retry.stream")
		if text != "Hello" || attrs != "map[retry.tokens.discarded:80 retry.tokens.input:160 retry.tokens.output:2]" || fates != "map[delivered:82 discarded:80]" {
			t.Errorf("stream %q: call span %s, retry.tokens %s; want Hello, 160 in, 2 out, 80 thrown away", text, attrs, fates)
		}
	})
}

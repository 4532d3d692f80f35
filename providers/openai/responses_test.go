package openai_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// answer is the scripted response: its lifecycle events, three deltas and
// its end, numbered 0 to 7.
func answer(id string) *llmhttptest.Responses {
	return llmhttptest.NewResponses(id).
		Event("response.created", "").
		Event("response.in_progress", "").
		Event("response.output_item.added", `"output_index":0,"item":{"id":"m1","type":"message","role":"assistant","status":"in_progress","content":[]}`).
		Event("response.content_part.added", `"item_id":"m1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`).
		Event("response.output_text.delta", `"item_id":"m1","output_index":0,"content_index":0,"delta":"Hello"`).
		Event("response.output_text.delta", `"item_id":"m1","output_index":0,"content_index":0,"delta":", resumed"`).
		Event("response.output_text.delta", `"item_id":"m1","output_index":0,"content_index":0,"delta":" world"`).
		Event("response.completed", `"usage":{"input_tokens":5,"output_tokens":3,"total_tokens":8,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}}`)
}

// streamThroughRetry streams "Say hello" through a RetryRunnable over a
// Responses of the scripted server, and returns the events and the error
// value received.
func streamThroughRetry(t *testing.T, srv *llmhttptest.Server, cfg retry.RetryConfig, opts ...option.RequestOption) ([]responses.ResponseStreamEventUnion, error) {
	t.Helper()
	opts = append([]option.RequestOption{option.WithAPIKey("test-key"), option.WithBaseURL("http://openai.test/v1/"),
		option.WithHTTPClient(srv.Client())}, opts...)
	r, err := retry.New(openai.NewResponses(model, opts...), cfg,
		retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := r.Stream(t.Context(), "Say hello")
	if err != nil {
		return nil, err
	}
	var events []responses.ResponseStreamEventUnion
	var last error
	for v := range ch {
		if err, ok := v.(error); ok {
			last = err
			continue
		}
		events = append(events, v.(responses.ResponseStreamEventUnion))
	}
	return events, last
}

func text(events []responses.ResponseStreamEventUnion) string {
	var b strings.Builder
	for _, ev := range events {
		if ev.Type == "response.output_text.delta" {
			b.WriteString(ev.Delta)
		}
	}
	return b.String()
}

var streamCfg = retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Second}

// An overload reported in-band before the first output fails the attempt,
// which is retried; nothing of it reaches the consumer.
func TestResponsesInBandErrorBeforeOutputIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		failing := llmhttptest.NewResponses("resp_1").Event("response.created", "").
			Event("error", `"code":"server_error","message":"The server is overloaded"`)
		srv := llmhttptest.New(failing.Stream(-1, nil), answer("resp_2").Stream(-1, nil))
		events, last := streamThroughRetry(t, srv, streamCfg)
		if last != nil || text(events) != "Hello, resumed world" || srv.Requests() != 2 {
			t.Fatalf("stream = %q, %v after %d requests, want the whole answer after a retry", text(events), last, srv.Requests())
		}
		if events[0].Type != "response.created" || events[0].Response.ID != "resp_2" {
			t.Errorf("first event = %s of %s, want the second response's response.created (held, then delivered)", events[0].Type, events[0].Response.ID)
		}
	})
}

// Quota and context-length failures are never retried, in-band or not, and
// the error names the code.
func TestResponsesPermanentFailuresAreNotRetried(t *testing.T) {
	for name, reply := range map[string]llmhttptest.Reply{
		"in-band insufficient_quota": llmhttptest.NewResponses("r").Event("response.created", "").
			Event("error", `"code":"insufficient_quota","message":"You exceeded your current quota"`).Stream(-1, nil),
		"response.failed context_length_exceeded": llmhttptest.NewResponses("r").Event("response.created", "").
			Event("response.failed", `"error":{"code":"context_length_exceeded","message":"too long"}`).Stream(-1, nil),
		"HTTP 429 insufficient_quota":      apiError(429, "insufficient_quota", "insufficient_quota"),
		"HTTP 400 context_length_exceeded": apiError(400, "invalid_request_error", "context_length_exceeded"),
	} {
		synctest.Test(t, func(t *testing.T) {
			srv := llmhttptest.New(reply, answer("unreachable").Stream(-1, nil))
			events, last := streamThroughRetry(t, srv, streamCfg)
			if len(events) != 0 || srv.Requests() != 1 {
				t.Errorf("%s: %d events after %d requests, want none after 1", name, len(events), srv.Requests())
			}
			re, ok := errors.AsType[*retry.Error](last)
			if !ok || re.Outcome != retry.OutcomeNotRetryable || re.Attempts != 1 {
				t.Errorf("%s: failure %v, want not_retryable after 1 attempt", name, last)
			}
		})
	}
}

// A stream that breaks after its first output is not retried without
// resumable streams: the break is the last value, at once, with no attempt
// spent on a Resume that cannot happen.
func TestResponsesBreakAfterOutputWithoutResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := llmhttptest.New(answer("resp_1").Stream(6, io.ErrUnexpectedEOF), answer("resp_2").Stream(-1, nil))
		cfg := streamCfg
		cfg.ResumeStreams = true // asked for, but the streams are not resumable
		events, last := streamThroughRetry(t, srv, cfg)
		if text(events) != "Hello, resumed" || !errors.Is(last, io.ErrUnexpectedEOF) || errors.Is(last, streams.ErrNotResumable) || srv.Requests() != 1 {
			t.Errorf("stream = %q, %v after %d requests, want the two deltas, then the break as it came (no Resume tried), after 1", text(events), last, srv.Requests())
		}
	})
}

// With WithResumableStreams, the stream is a background response, and a
// break after its first output is resumed from the sequence number of the
// last event delivered: the text reassembled is the answer, no event twice.
func TestResponsesResumeExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		script := answer("resp_1")
		srv := llmhttptest.New(script.Stream(6, io.ErrUnexpectedEOF), script.After(5))
		cfg := streamCfg
		cfg.ResumeStreams = true
		events, last := streamThroughRetry(t, srv, cfg, openai.WithResumableStreams())
		if last != nil || text(events) != "Hello, resumed world" {
			t.Fatalf("stream = %q, %v, want the whole answer", text(events), last)
		}
		for i, ev := range events {
			if ev.SequenceNumber != int64(i) {
				t.Fatalf("event %d has sequence number %d: an event repeated or lost", i, ev.SequenceNumber)
			}
		}
		urls := srv.URLs()
		if len(urls) != 2 || !strings.HasSuffix(urls[1], "/responses/resp_1?starting_after=5&stream=true") {
			t.Errorf("requests = %v, want the stream then GET /responses/resp_1?starting_after=5&stream=true", urls)
		}
		if bodies := srv.Bodies(); len(bodies) != 2 || bodies[1] != "" {
			t.Errorf("resume request body = %q, want none: the stream is asked for in the query", bodies[len(bodies)-1])
		}
		if body := srv.Bodies()[0]; !strings.Contains(body, `"background":true`) || !strings.Contains(body, `"store":true`) {
			t.Errorf("request = %s, want a background, stored response", body)
		}
	})
}

func TestResponsesResumeWithoutTheOptionIsNotResumable(t *testing.T) {
	r := openai.NewResponses(model, option.WithAPIKey("k"))
	if _, err := r.Resume(t.Context(), "q", responses.ResponseStreamEventUnion{SequenceNumber: 3}); !errors.Is(err, streams.ErrNotResumable) {
		t.Errorf("Resume() = %v, want streams.ErrNotResumable", err)
	}
}

func TestResponsesInvokeAndCheckResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		full := `{"id":"resp_1","object":"response","status":"completed","model":"gpt-test","output":[{"id":"m1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hello","annotations":[]}]}]}`
		cut := `{"id":"resp_2","object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"gpt-test","output":[]}`
		srv := llmhttptest.New(llmhttptest.JSON(200, full), llmhttptest.JSON(200, cut))
		r := openai.NewResponses(model, option.WithAPIKey("k"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(srv.Client()))
		out, err := r.Invoke(t.Context(), "Say hello")
		if err != nil || out.(*responses.Response).OutputText() != "Hello" || openai.CheckResponse(t.Context(), nil, out) != nil {
			t.Fatalf("Invoke() = %v, %v, want Hello, passing CheckResponse", out, err)
		}
		out, _ = r.Invoke(t.Context(), "Say hello")
		if err := openai.CheckResponse(t.Context(), nil, out); err == nil || retry.Permanent(err) == nil {
			t.Errorf("CheckResponse(cut at max_output_tokens) = %v, want a permanent answer error", err)
		}
		if _, err := r.Invoke(t.Context(), 42); err == nil {
			t.Error("Invoke(42) = nil error, want one naming the inputs it takes")
		}
	})
}

// The GenAI attributes: the request's on the call span, the response's
// (id, model, status, usage) on the attempt span; no prompt or answer text.
func TestResponsesTelemetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := llmhttptest.New(answer("resp_9").Stream(-1, nil))
		rec := tracetest.NewSpanRecorder()
		r, err := retry.New(openai.NewResponses(model, option.WithAPIKey("k"), option.WithBaseURL("http://openai.test/v1/"),
			option.WithHTTPClient(srv.Client())), streamCfg,
			retry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))), retry.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		ch, err := r.Stream(t.Context(), "Say hello")
		if err != nil {
			t.Fatal(err)
		}
		for range ch {
		}
		got := map[string]map[string]string{}
		for _, s := range rec.Ended() {
			m := map[string]string{}
			for _, kv := range s.Attributes() {
				m[string(kv.Key)] = kv.Value.String()
				if strings.Contains(kv.Value.String(), "Hello") || strings.Contains(kv.Value.String(), "Say hello") {
					t.Errorf("span %s carries text: %s=%s", s.Name(), kv.Key, kv.Value.String())
				}
			}
			got[s.Name()] = m
		}
		for span, want := range map[string]map[string]string{
			"retry.stream":  {"gen_ai.provider.name": "openai", "gen_ai.request.model": model, "gen_ai.operation.name": "chat"},
			"retry.attempt": {"gen_ai.response.id": "resp_9", "gen_ai.response.model": "gpt-test", "gen_ai.usage.output_tokens": "3"},
		} {
			for k, v := range want {
				if got[span][k] != v {
					t.Errorf("%s %s = %q, want %q", span, k, got[span][k], v)
				}
			}
		}
	})
}

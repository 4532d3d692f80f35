package anthropic_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/anthropic"
	"github.com/steadfast-go/steadfast/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const model = "claude-haiku-4-5"

func newHarness(t *testing.T, script ...llmhttptest.Reply) *llmhttptest.Harness {
	t.Helper()
	return llmhttptest.NewHarness(t, func(c *http.Client) core.Runnable {
		return anthropic.NewMessages(model,
			option.WithAPIKey("test-key"),
			option.WithBaseURL("http://anthropic.test/"),
			option.WithHTTPClient(c))
	}, script...)
}

func message(text string) llmhttptest.Reply {
	return llmhttptest.JSON(200, fmt.Sprintf(`{"id":"msg_1","type":"message","role":"assistant","model":%q,
		"content":[{"type":"text","text":%q}],"stop_reason":"end_turn","stop_sequence":null,
		"usage":{"input_tokens":3,"output_tokens":1}}`, model, text))
}

func apiError(status int, typ string, header ...string) llmhttptest.Reply {
	return llmhttptest.JSON(status, fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":"%s"}}`, typ, typ), header...)
}

func event(name, data string) string { return "event: " + name + "\ndata: " + data }

func start() string {
	return event("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":%q,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":0}}}`, model))
}

func delta(text string) string {
	return event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, text))
}

func stop() string { return event("message_stop", `{"type":"message_stop"}`) }

func TestRetryAfterMsThenSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, apiError(429, "rate_limit_error", "retry-after-ms", "200"), message("Hello"))
		begin := time.Now()
		out, err := h.R.Invoke(t.Context(), "Say hello")
		if err != nil || anthropic.Text(out) != "Hello" {
			t.Fatalf("Invoke() = %v, %v, want Hello", out, err)
		}
		if got := time.Since(begin); got != 200*time.Millisecond {
			t.Errorf("waited %v, want the server's 200ms", got)
		}
		if h.Server.Requests() != 2 {
			t.Errorf("HTTP requests = %d, want 2", h.Server.Requests())
		}
		attrs := h.CallSpan(t)
		for k, v := range map[string]string{"gen_ai.provider.name": "anthropic", "gen_ai.request.model": model, "gen_ai.operation.name": "chat"} {
			if attrs[k] != v {
				t.Errorf("call span %s = %q, want %q", k, attrs[k], v)
			}
		}
	})
}

func TestRetried(t *testing.T) {
	for name, reply := range map[string]llmhttptest.Reply{
		"529 overloaded_error": apiError(529, "overloaded_error"),
		"503":                  apiError(503, "api_error"),
		"500 api_error":        apiError(500, "api_error"),
		"Retry-After seconds":  apiError(429, "rate_limit_error", "Retry-After", "2"),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, reply, message("ok"))
				if out, err := h.R.Invoke(t.Context(), "q"); err != nil || anthropic.Text(out) != "ok" {
					t.Errorf("Invoke() = %v, %v, want ok after one retry", out, err)
				}
				if h.Server.Requests() != 2 {
					t.Errorf("HTTP requests = %d, want 2", h.Server.Requests())
				}
			})
		})
	}
}

func TestOverloadedErrorType(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, apiError(529, "overloaded_error"), apiError(529, "overloaded_error"), apiError(529, "overloaded_error"))
		_, err := h.R.Invoke(t.Context(), "q")
		h.WantOutcome(t, err, retry.OutcomeExhausted, 3)
		if got := h.CallSpan(t)["error.type"]; got != "overloaded_error" {
			t.Errorf("error.type = %q, want overloaded_error", got)
		}
	})
}

func TestNotRetried(t *testing.T) {
	for name, reply := range map[string]llmhttptest.Reply{
		"400 invalid_request_error": apiError(400, "invalid_request_error"),
		"401 authentication_error":  apiError(401, "authentication_error"),
		"403 permission_error":      apiError(403, "permission_error"),
		"404 not_found_error":       apiError(404, "not_found_error"),
		"402 billing_error":         apiError(402, "billing_error"),
		"529 x-should-retry=false":  apiError(529, "overloaded_error", "x-should-retry", "false"),
		"413 request_too_large":     apiError(413, "request_too_large"),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, reply, message("unreachable"))
				_, err := h.R.Invoke(t.Context(), "q")
				h.WantOutcome(t, err, retry.OutcomeNotRetryable, 1)
				var sdkErr *ant.Error
				if !errors.As(err, &sdkErr) {
					t.Error("the SDK's *anthropic.Error is not reachable")
				}
			})
		})
	}
}

func TestStreamFailsBeforeFirstDeltaIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t,
			llmhttptest.SSE(start(), event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)),
			llmhttptest.SSE(start(), delta("Hel"), delta("lo"), stop()))
		ch, err := h.R.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if text, _ := llmhttptest.Drain(ch, anthropic.Text); text != "Hello" {
			t.Errorf("stream = %q, want Hello", text)
		}
		if h.Server.Requests() != 2 {
			t.Errorf("HTTP requests = %d, want 2", h.Server.Requests())
		}
	})
}

func TestStreamRefusedIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, apiError(529, "overloaded_error"), llmhttptest.SSE(start(), delta("ok"), stop()))
		ch, err := h.R.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if text, _ := llmhttptest.Drain(ch, anthropic.Text); text != "ok" {
			t.Errorf("stream = %q, want ok", text)
		}
	})
}

func TestStreamFailsAfterFirstDeltaIsPassedOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t,
			llmhttptest.SSE(start(), delta("Hel"), delta("lo"), event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)),
			llmhttptest.SSE(start(), delta("never"), stop()))
		ch, err := h.R.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		text, last := llmhttptest.Drain(ch, anthropic.Text)
		if text != "Hello" {
			t.Errorf("stream text = %q, want Hello with no delta repeated", text)
		}
		var sdkErr *ant.Error
		if e, ok := last.(error); !ok || !errors.As(e, &sdkErr) {
			t.Errorf("last value = %v, want the stream's overloaded error", last)
		}
		if h.Server.Requests() != 1 {
			t.Errorf("HTTP requests = %d, want 1: nothing after the commit is retried", h.Server.Requests())
		}
	})
}

func TestStreamConnectionDropsAfterFirstDelta(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		broken := llmhttptest.SSE(start(), delta("Hel"))
		broken.BreakAfter = io.ErrUnexpectedEOF
		h := newHarness(t, broken)
		ch, err := h.R.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		text, last := llmhttptest.Drain(ch, anthropic.Text)
		if e, ok := last.(error); text != "Hel" || !ok || !errors.Is(e, io.ErrUnexpectedEOF) {
			t.Errorf("stream = %q then %v, want Hel then the broken connection", text, last)
		}
	})
}

func TestBatchAndBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, message("a"), message("a"))
		outs, err := h.R.Batch(t.Context(), []any{"x", "y"})
		if err != nil || len(outs) != 2 || anthropic.Text(outs[0]) != "a" || anthropic.Text(outs[1]) != "a" {
			t.Errorf("Batch() = %v, %v, want [a a]", outs, err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		h.Sendless = true
		_, err := h.R.Invoke(t.Context(), 3.14)
		h.WantOutcome(t, err, retry.OutcomeNotRetryable, 0)
	})
}

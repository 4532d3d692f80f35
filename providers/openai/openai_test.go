package openai_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const model = "gpt-4o-mini"

func completion(text string) llmhttptest.Reply {
	return llmhttptest.JSON(200, fmt.Sprintf(`{"id":"c1","object":"chat.completion","created":1,"model":%q,
		"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, model, text))
}

func apiError(status int, typ, code string, header ...string) llmhttptest.Reply {
	return llmhttptest.JSON(status, fmt.Sprintf(`{"error":{"message":"%s","type":%q,"param":null,"code":%q}}`, typ, typ, code), header...)
}

func chunk(text string) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":%q,"choices":[{"index":0,"delta":{"content":%q}}]}`, model, text)
}

func newHarness(t *testing.T, script ...llmhttptest.Reply) *llmhttptest.Harness {
	t.Helper()
	return llmhttptest.NewHarness(t, func(c *http.Client) core.Runnable {
		return openai.NewChat(model,
			option.WithAPIKey("test-key"),
			option.WithBaseURL("http://openai.test/v1/"),
			option.WithHTTPClient(c))
	}, script...)
}

func TestRetryAfterMsThenSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, apiError(429, "requests", "rate_limit_exceeded", "retry-after-ms", "200"), completion("Hello"))
		start := time.Now()
		out, err := h.R.Invoke(t.Context(), "Say hello")
		if err != nil || openai.Text(out) != "Hello" {
			t.Fatalf("Invoke() = %v, %v, want Hello", out, err)
		}
		if got := time.Since(start); got != 200*time.Millisecond {
			t.Errorf("waited %v, want the server's 200ms", got)
		}
		if h.Server.Requests() != 2 {
			t.Errorf("HTTP requests = %d, want 2", h.Server.Requests())
		}
		attrs := h.CallSpan(t)
		for k, v := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": model, "retry.operation": "openai.chat"} {
			if attrs[k] != v {
				t.Errorf("call span %s = %q, want %q", k, attrs[k], v)
			}
		}
	})
}

func TestNotRetried(t *testing.T) {
	for name, reply := range map[string]llmhttptest.Reply{
		"insufficient_quota 429":   apiError(429, "insufficient_quota", "insufficient_quota"),
		"400":                      apiError(400, "invalid_request_error", ""),
		"context length":           apiError(400, "invalid_request_error", "context_length_exceeded"),
		"401":                      apiError(401, "invalid_request_error", "invalid_api_key"),
		"404":                      apiError(404, "invalid_request_error", "model_not_found"),
		"503 x-should-retry=false": apiError(503, "server_error", "", "x-should-retry", "false"),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, reply, completion("unreachable"))
				_, err := h.R.Invoke(t.Context(), "q")
				h.WantOutcome(t, err, retry.OutcomeNotRetryable, 1)
				var sdkErr *oai.Error
				if !errors.As(err, &sdkErr) {
					t.Error("the SDK's *openai.Error is not reachable")
				}
			})
		})
	}
}

func TestQuotaErrorTypeInTelemetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, apiError(429, "insufficient_quota", "insufficient_quota"))
		_, _ = h.R.Invoke(t.Context(), "q")
		if got := h.CallSpan(t)["error.type"]; got != "insufficient_quota" {
			t.Errorf("error.type = %q, want the API's code insufficient_quota", got)
		}
	})
}

func TestRetried(t *testing.T) {
	for name, reply := range map[string]llmhttptest.Reply{
		"503":                     apiError(503, "server_error", ""),
		"500":                     apiError(500, "server_error", ""),
		"429 rate limit":          apiError(429, "requests", "rate_limit_exceeded"),
		"400 x-should-retry=true": apiError(400, "invalid_request_error", "", "x-should-retry", "true"),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, reply, completion("ok"))
				if out, err := h.R.Invoke(t.Context(), "q"); err != nil || openai.Text(out) != "ok" {
					t.Errorf("Invoke() = %v, %v, want ok after one retry", out, err)
				}
				if h.Server.Requests() != 2 {
					t.Errorf("HTTP requests = %d, want 2", h.Server.Requests())
				}
			})
		})
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		date := time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)
		h := newHarness(t, apiError(503, "server_error", "", "Retry-After", date), completion("ok"))
		start := time.Now()
		if _, err := h.R.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		// HTTP dates have whole seconds: at least 2s, at most 3s.
		if got := time.Since(start); got < 2*time.Second || got > 3*time.Second {
			t.Errorf("waited %v, want the date's 2-3s", got)
		}
	})
}

func TestStreamFailsBeforeFirstDeltaIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t,
			llmhttptest.SSE(`{"error":{"message":"The server is overloaded","type":"server_error","code":null}}`),
			llmhttptest.SSE(chunk("Hel"), chunk("lo"), "[DONE]"))
		ch, err := h.R.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		text, last := llmhttptest.Drain(ch, openai.Text)
		if text != "Hello" || openai.Text(last) != "lo" {
			t.Errorf("stream = %q (last %v), want Hello", text, last)
		}
		if h.Server.Requests() != 2 {
			t.Errorf("HTTP requests = %d, want 2", h.Server.Requests())
		}
	})
}

func TestStreamRefusedIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, apiError(503, "server_error", ""), llmhttptest.SSE(chunk("ok"), "[DONE]"))
		ch, err := h.R.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if text, _ := llmhttptest.Drain(ch, openai.Text); text != "ok" {
			t.Errorf("stream = %q, want ok", text)
		}
	})
}

func TestStreamFailsAfterFirstDeltaIsPassedOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		broken := llmhttptest.SSE(chunk("Hel"), chunk("lo"))
		broken.BreakAfter = io.ErrUnexpectedEOF
		h := newHarness(t, broken, llmhttptest.SSE(chunk("never"), "[DONE]"))
		ch, err := h.R.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		text, last := llmhttptest.Drain(ch, openai.Text)
		if text != "Hello" {
			t.Errorf("stream text = %q, want Hello with no delta repeated", text)
		}
		if e, ok := last.(error); !ok || !errors.Is(e, io.ErrUnexpectedEOF) {
			t.Errorf("last value = %v, want the broken connection's error", last)
		}
		if h.Server.Requests() != 1 {
			t.Errorf("HTTP requests = %d, want 1: nothing after the commit is retried", h.Server.Requests())
		}
	})
}

func TestBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, completion("a"), completion("a"))
		outs, err := h.R.Batch(t.Context(), []any{"x", "y"})
		if err != nil || len(outs) != 2 || openai.Text(outs[0]) != "a" || openai.Text(outs[1]) != "a" {
			t.Errorf("Batch() = %v, %v, want [a a]", outs, err)
		}
	})
}

func TestBadInputIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		h.Sendless = true
		_, err := h.R.Invoke(t.Context(), 42)
		h.WantOutcome(t, err, retry.OutcomeNotRetryable, 0)
	})
}

func TestSDKRetriesAreOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := llmhttptest.New(apiError(503, "server_error", ""), completion("ok"))
		chat := openai.NewChat(model, option.WithAPIKey("k"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(srv.Client()))
		if _, err := chat.Invoke(t.Context(), "q"); err == nil || srv.Requests() != 1 {
			t.Errorf("Invoke() error = %v after %d requests, want the 503 after 1", err, srv.Requests())
		}
	})
}

// openai-go leaves the API's message out of Error(): the adapted error
// names the API's code, so a log line says why the call failed.
func TestGiveUpErrorNamesTheAPICode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, apiError(400, "invalid_request_error", "context_length_exceeded"))
		_, err := h.R.Invoke(t.Context(), "q")
		if err == nil || !strings.Contains(err.Error(), "(context_length_exceeded)") {
			t.Errorf("error = %v, want it to name context_length_exceeded", err)
		}
	})
}

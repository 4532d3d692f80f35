package gemini_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/genai"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/providers/gemini"
	"github.com/steadfast-go/steadfast/retry"
)

// opencensus, imported by Google's auth library, starts a worker at init
// that never ends: it is not ours.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

const model = "gemini-2.5-flash"

func newModels(t *testing.T, c *http.Client) *gemini.Models {
	t.Helper()
	m, err := gemini.New(context.Background(), model, genai.ClientConfig{
		APIKey: "test-key", Backend: genai.BackendGeminiAPI, HTTPClient: c,
		HTTPOptions: genai.HTTPOptions{BaseURL: "http://gemini.test/"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newHarness(t *testing.T, script ...llmhttptest.Reply) *llmhttptest.Harness {
	t.Helper()
	return llmhttptest.NewHarness(t, func(c *http.Client) core.Runnable { return newModels(t, c) }, script...)
}

// response is a generateContent answer; chunk is the same shape, as the
// SSE stream sends it.
func response(text, finish string) string {
	parts := "[]"
	if text != "" {
		parts = fmt.Sprintf(`[{"text":%q}]`, text)
	}
	fin := ""
	if finish != "" {
		fin = fmt.Sprintf(`,"finishReason":%q`, finish)
	}
	return fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":%s}%s,"index":0}],
		"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":3,"totalTokenCount":10},
		"modelVersion":"gemini-2.5-flash-001","responseId":"resp-1"}`, parts, fin)
}

func ok(text string) llmhttptest.Reply { return llmhttptest.JSON(200, response(text, "STOP")) }

// apiError is a google.rpc error body with the given details.
func apiError(code int, status string, details ...string) llmhttptest.Reply {
	d := ""
	for i, x := range details {
		if i > 0 {
			d += ","
		}
		d += x
	}
	return llmhttptest.JSON(code, fmt.Sprintf(`{"error":{"code":%d,"message":"%s","status":%q,"details":[%s]}}`, code, status, status, d))
}

func retryInfo(delay string) string {
	return fmt.Sprintf(`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":%q}`, delay)
}

func quota(id string) string {
	return fmt.Sprintf(`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_requests","quotaId":%q}]}`, id)
}

// A per-minute rate limit is retried after exactly RetryInfo's delay.
func TestRateLimitRetriedAfterRetryInfo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, apiError(429, "RESOURCE_EXHAUSTED", quota("GenerateRequestsPerMinutePerProjectPerModel"), retryInfo("2s")), ok("Hello"))
		start := time.Now()
		out, err := h.R.Invoke(t.Context(), "Say hello")
		if err != nil || gemini.Text(out) != "Hello" {
			t.Fatalf("Invoke() = %v, %v, want Hello", out, err)
		}
		if got := time.Since(start); got != 2*time.Second {
			t.Errorf("waited %v, want RetryInfo's 2s", got)
		}
		res := out.(*genai.GenerateContentResponse)
		if res.UsageMetadata.PromptTokenCount != 7 || res.UsageMetadata.CandidatesTokenCount != 3 || res.Candidates[0].FinishReason != genai.FinishReasonStop {
			t.Errorf("response = %+v, want usage 7/3 and finish STOP", res)
		}
		call := h.CallSpan(t)
		for k, v := range map[string]string{"gen_ai.provider.name": "gcp.gemini", "gen_ai.operation.name": "generate_content", "gen_ai.request.model": model} {
			if call[k] != v {
				t.Errorf("call span %s = %q, want %q", k, call[k], v)
			}
		}
		attempts := h.AttemptSpans()
		last := attempts[len(attempts)-1]
		for k, v := range map[string]string{"gen_ai.response.id": "resp-1", "gen_ai.response.model": "gemini-2.5-flash-001",
			"gen_ai.response.finish_reasons": `["STOP"]`, "gen_ai.usage.input_tokens": "7", "gen_ai.usage.output_tokens": "3"} {
			if last[k] != v {
				t.Errorf("attempt span %s = %q, want %q", k, last[k], v)
			}
		}
	})
}

func TestNotRetried(t *testing.T) {
	for name, reply := range map[string]llmhttptest.Reply{
		"per-day quota":    apiError(429, "RESOURCE_EXHAUSTED", quota("GenerateRequestsPerDayPerProjectPerModel-FreeTier"), retryInfo("20s")),
		"invalid argument": apiError(400, "INVALID_ARGUMENT"),
		"permission":       apiError(403, "PERMISSION_DENIED"),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, reply, ok("never"))
				_, err := h.R.Invoke(t.Context(), "q")
				h.WantOutcome(t, err, retry.OutcomeNotRetryable, 1)
				if _, ok := errors.AsType[genai.APIError](err); !ok {
					t.Errorf("error = %v, want the SDK's genai.APIError reachable", err)
				}
			})
		})
	}
}

func TestUnavailableRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, apiError(503, "UNAVAILABLE"), ok("ok"))
		if out, err := h.R.Invoke(t.Context(), "q"); err != nil || gemini.Text(out) != "ok" {
			t.Errorf("Invoke() = %v, %v, want ok after one retry", out, err)
		}
		var types []string
		for _, a := range h.AttemptSpans() {
			if t, ok := a["error.type"]; ok {
				types = append(types, t)
			}
		}
		if len(types) != 1 || types[0] != "UNAVAILABLE" {
			t.Errorf("attempt error types = %v, want [UNAVAILABLE]", types)
		}
	})
}

// A stream whose only chunk before its failure carried no content did not
// commit: it is retried, and the consumer gets the second stream whole.
func TestStreamCommitsAtTheFirstRealChunk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t,
			llmhttptest.SSE(response("", ""), `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`),
			llmhttptest.SSE(response("", ""), response("Hel", ""), response("lo", "STOP")))
		ch, err := h.R.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		var chunks []*genai.GenerateContentResponse
		text := ""
		for v := range ch {
			c, ok := v.(*genai.GenerateContentResponse)
			if !ok {
				t.Fatalf("value %v (%T), want a *genai.GenerateContentResponse", v, v)
			}
			chunks = append(chunks, c)
			text += gemini.Text(c)
		}
		if len(chunks) != 3 || text != "Hello" {
			t.Fatalf("chunks = %d, text %q, want 3 and Hello", len(chunks), text)
		}
		if last := chunks[2]; last.Candidates[0].FinishReason != genai.FinishReasonStop || last.UsageMetadata.CandidatesTokenCount != 3 {
			t.Errorf("last chunk = %+v, want finish STOP and usage", last)
		}
		if h.Server.Requests() != 2 {
			t.Errorf("HTTP requests = %d, want 2", h.Server.Requests())
		}
	})
}

func TestStreamBreaksAfterFirstChunk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		broken := llmhttptest.SSE(response("Hel", ""))
		broken.BreakAfter = io.ErrUnexpectedEOF
		h := newHarness(t, broken, llmhttptest.SSE(response("never", "STOP")))
		ch, err := h.R.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		text, last := llmhttptest.Drain(ch, gemini.Text)
		if e, ok := last.(error); text != "Hel" || !ok || !errors.Is(e, io.ErrUnexpectedEOF) {
			t.Errorf("stream = %q then %v, want Hel then the broken connection", text, last)
		}
		if h.Server.Requests() != 1 {
			t.Errorf("HTTP requests = %d, want 1: nothing after the commit is retried", h.Server.Requests())
		}
	})
}

func TestStreamRefusedIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, apiError(503, "UNAVAILABLE"), llmhttptest.SSE(response("ok", "STOP")))
		ch, err := h.R.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if text, _ := llmhttptest.Drain(ch, gemini.Text); text != "ok" {
			t.Errorf("stream = %q, want ok", text)
		}
	})
}

func TestBatchAndBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, ok("a"), ok("a"))
		outs, err := h.R.Batch(t.Context(), []any{"x", "y"})
		if err != nil || len(outs) != 2 || gemini.Text(outs[0]) != "a" || gemini.Text(outs[1]) != "a" {
			t.Errorf("Batch() = %v, %v, want [a a]", outs, err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		h.Sendless = true
		_, err := h.R.Invoke(t.Context(), 42)
		h.WantOutcome(t, err, retry.OutcomeNotRetryable, 0)
	})
}

func TestCheckAnswer(t *testing.T) {
	for name, tc := range map[string]struct {
		body      string
		kind      string
		retryable bool
	}{
		"truncated": {response("half", "MAX_TOKENS"), llmhttp.Truncated, false},
		"safety":    {response("", "SAFETY"), llmhttp.Filtered, false},
		"blocked prompt": {`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":7}}`,
			llmhttp.Filtered, false},
		"empty": {response("", "STOP"), llmhttp.Empty, true},
		"fine":  {response("Hi", "STOP"), "", false},
	} {
		t.Run(name, func(t *testing.T) {
			srv := llmhttptest.New(llmhttptest.JSON(200, tc.body))
			out, err := newModels(t, srv.Client()).Invoke(t.Context(), "q")
			if err != nil {
				t.Fatal(err)
			}
			err = gemini.CheckAnswer(t.Context(), "q", out)
			ae, ok := errors.AsType[*llmhttp.AnswerError](err)
			switch {
			case tc.kind == "" && err != nil:
				t.Errorf("CheckAnswer() = %v, want nil", err)
			case tc.kind != "" && (!ok || ae.Kind != tc.kind || ae.Retryable() != tc.retryable):
				t.Errorf("CheckAnswer() = %v, want a %s AnswerError, retryable %v", err, tc.kind, tc.retryable)
			}
		})
	}
}

func TestNewRejectsAnEmptyModel(t *testing.T) {
	if _, err := gemini.New(t.Context(), "", genai.ClientConfig{APIKey: "k"}); err == nil {
		t.Error("New with no model: error = nil")
	}
}

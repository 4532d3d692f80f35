package openai_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// The wordings of issue #42, as OpenAI and a LiteLLM proxy send them.
var (
	overflow400 = llmhttptest.JSON(400, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, you requested 130532 tokens (126532 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)
	tooLarge429 = llmhttptest.JSON(429, `{"error":{"message":"Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 45000. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`)
	budget429   = llmhttptest.JSON(429, `{"error":{"message":"Budget has been exceeded! Current cost: 10.52, Max budget: 10.0","type":"budget_exceeded","param":null,"code":"400"}}`)
)

// chatUnder returns a RetryRunnable of a Chat over s, under
// llmhttptest.Config with, when repairs is at least 0, the Chat's
// RepairOverflow and MaxRepairs repairs.
func chatUnder(t *testing.T, s *llmhttptest.Server, repairs int) *retry.RetryRunnable {
	t.Helper()
	chat := openai.NewChat(model, option.WithAPIKey("test-key"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(s.Client()))
	cfg := llmhttptest.Config
	if repairs >= 0 {
		cfg.Repair, cfg.MaxRepairs = chat.RepairOverflow, repairs
	}
	r, err := retry.New(chat, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A 429 that no wait fixes is one request, not_retryable, its error.type
// saying why; a TPM 429 with room left is still retried (hint_test.go).
func TestRequestsNoRetryFixesAreSentOnce(t *testing.T) {
	for name, tc := range map[string]struct {
		reply llmhttptest.Reply
		typ   string
		dead  bool
	}{
		"TPM request larger than the limit": {tooLarge429, "request_too_large", false},
		"a gateway's budget exceeded":       {budget429, "budget_exceeded", true},
	} {
		synctest.Test(t, func(t *testing.T) {
			s := llmhttptest.New(tc.reply, completion("unreachable"))
			r := chatUnder(t, s, -1)
			_, err := r.Invoke(t.Context(), "Summarize this")
			re, ok := errors.AsType[*retry.Error](err)
			if !ok || re.Outcome != retry.OutcomeNotRetryable || s.Requests() != 1 {
				t.Fatalf("%s: %v after %d requests; want not_retryable after 1", name, err, s.Requests())
			}
			if got := retry.ErrorType(err); got != tc.typ {
				t.Errorf("%s: error.type %q; want %q", name, got, tc.typ)
			}
			if a, _ := errors.AsType[*llmhttp.APIError](err); a == nil || a.CannotServe() != tc.dead {
				t.Errorf("%s: CannotServe = %v; want %v", name, a != nil && a.CannotServe(), tc.dead)
			}
		})
	}
}

// The overflow of issue #42 is repaired at once: the second request asks
// for 1468 output tokens (4000 less the 2532 over) and succeeds. Without
// Repair it is one request.
func TestRepairOverflowLowersTheOutputLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := llmhttptest.New(overflow400, completion("A summary"))
		r := chatUnder(t, s, 0)
		in := oai.ChatCompletionNewParams{Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("a long document")}, MaxCompletionTokens: oai.Int(4000)}
		start := time.Now()
		out, err := r.Invoke(t.Context(), in)
		if err != nil || openai.Text(out) != "A summary" {
			t.Fatalf("Invoke() = %v, %v; want the repaired call's answer", out, err)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("took %v; want the repair at once", took)
		}
		bodies := s.Bodies()
		if len(bodies) != 2 || !strings.Contains(bodies[0], `"max_completion_tokens":4000`) || !strings.Contains(bodies[1], `"max_completion_tokens":1468`) {
			t.Errorf("request bodies %q; want max_completion_tokens 4000, then 1468", bodies)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		s := llmhttptest.New(overflow400, completion("unreachable"))
		r := chatUnder(t, s, -1)
		_, err := r.Invoke(t.Context(), "a long document")
		if re, ok := errors.AsType[*retry.Error](err); !ok || re.Outcome != retry.OutcomeNotRetryable || s.Requests() != 1 {
			t.Errorf("without Repair: %v after %d requests; want not_retryable after 1", err, s.Requests())
		}
	})
}

// The 429 form is repaired too: 45000 requested against 30000, so an
// output limit of 20000 becomes 5000. A repair that fixes nothing (the
// server keeps saying the same) is tried MaxRepairs times.
func TestRepairOverflowOfTheTPM429(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := llmhttptest.New(tooLarge429, completion("ok"))
		r := chatUnder(t, s, 0)
		in := oai.ChatCompletionNewParams{Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("q")}, MaxTokens: oai.Int(20000)}
		if _, err := r.Invoke(t.Context(), in); err != nil {
			t.Fatal(err)
		}
		if b := s.Bodies(); len(b) != 2 || !strings.Contains(b[1], `"max_tokens":5000`) {
			t.Errorf("request bodies %q; want the second with max_tokens 5000", b)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		s := llmhttptest.NewFunc(func(*http.Request, string) llmhttptest.Reply { return overflow400 })
		r := chatUnder(t, s, 2)
		_, err := r.Invoke(t.Context(), "q")
		if re, ok := errors.AsType[*retry.Error](err); !ok || re.Outcome != retry.OutcomeNotRetryable || s.Requests() != 3 {
			t.Errorf("a repair that fixes nothing: %v after %d requests; want not_retryable after 1 + MaxRepairs = 3", err, s.Requests())
		}
	})
}

// Responses' repair lowers max_output_tokens; nothing fits when the input
// alone fills the window.
func TestResponsesRepairOverflow(t *testing.T) {
	rs := openai.NewResponses(model)
	err := llmhttp.Classify(&llmhttp.APIError{Status: 400, Err: errors.New("400 Bad Request")}, nil,
		"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (7000 in the messages, 2000 in the completion).")
	got, ok := rs.RepairOverflow(t.Context(), responses.ResponseNewParams{MaxOutputTokens: oai.Int(2000)}, err)
	if p, _ := got.(responses.ResponseNewParams); !ok || p.MaxOutputTokens.Or(0) != 1192 {
		t.Errorf("RepairOverflow = %+v, %v; want max_output_tokens 1192", got, ok)
	}
	full := llmhttp.Classify(&llmhttp.APIError{Status: 400, Err: errors.New("400 Bad Request")}, nil,
		"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.")
	if got, ok := rs.RepairOverflow(t.Context(), "q", full); ok {
		t.Errorf("RepairOverflow of an input that alone overflows = %+v, true; want false", got)
	}
}

package llmhttp_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/steadfast-go/steadfast/llmhttp"
)

func TestParseOverflow(t *testing.T) {
	for msg, want := range map[string]llmhttp.Overflow{
		// OpenAI's 400, and vLLM's and LiteLLM's copies of it.
		"This model's maximum context length is 128000 tokens. However, you requested 130532 tokens (126532 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.": {128000, 126532, 4000, 130532},
		"This model's maximum context length is 8192 tokens. However, you requested 8500 tokens (7000 in the messages, 500 in the functions, 1000 in the completion).":                                         {8192, 7500, 1000, 8500},
		"litellm.ContextWindowExceededError: litellm.BadRequestError: This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).":  {4096, 4000, 1000, 5000},
		"This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.":                                                    {128000, 130532, 0, 130532},
		// vLLM's own.
		"This model's maximum context length is 32768 tokens. However, you requested 1000 output tokens and your prompt contains at least 32001 input tokens, for a total of at least 33001 tokens.": {32768, 32001, 1000, 33001},
		"'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None":           {4096, 2778, 8000, 10778},
		"This model's maximum context length is 1536 tokens. However, your request has 4176 input tokens.":                                                                                           {1536, 4176, 0, 4176},
		// OpenAI's 429.
		"Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 45000. The input or output tokens must be reduced in order to run successfully.": {30000, 0, 0, 45000},
		// Anthropic's two.
		"input length and `max_tokens` exceed context limit: 197202 + 21333 > 200000, decrease input length or `max_tokens` and try again": {200000, 197202, 21333, 218535},
		"prompt is too long: 208451 tokens > 200000 maximum":                                                                               {200000, 208451, 0, 208451},
		// Gemini's.
		"The input token count (1054016) exceeds the maximum number of tokens allowed (1048576).": {1048576, 1054016, 0, 1054016},
	} {
		got, ok := llmhttp.ParseOverflow(errors.New(msg))
		if !ok || got != want {
			t.Errorf("ParseOverflow(%.60q…) = %+v, %v; want %+v", msg, got, ok, want)
		}
	}
}

// A wording it does not know, numbers that are not an overflow, or
// numbers beyond int are false: never a guess.
func TestParseOverflowNeverGuesses(t *testing.T) {
	for _, msg := range []string{
		"Your input exceeds the context window of this model. Please adjust your input and try again.",
		"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29500, Requested 2000. Please try again in 3ms.",
		"Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 2000.",
		"prompt is too long: 100 tokens > 200000 maximum",
		"input length and `max_tokens` exceed context limit: -5 + 3 > 200000",
		"prompt is too long: 99999999999999999999999 tokens > 200000 maximum",
		"input length and `max_tokens` exceed context limit: 9223372036854775807 + 9223372036854775807 > 200000",
		"The input token count (5) exceeds the maximum number of tokens allowed (0).",
		"",
	} {
		if got, ok := llmhttp.ParseOverflow(errors.New(msg)); ok {
			t.Errorf("ParseOverflow(%q) = %+v, true; want false", msg, got)
		}
	}
	if _, ok := llmhttp.ParseOverflow(nil); ok {
		t.Error("ParseOverflow(nil) = true")
	}
}

// An APIError's provider message is read even when its text (the SDK's)
// leaves the message out, as openai-go's does.
func TestParseOverflowReadsTheProvidersMessage(t *testing.T) {
	err := llmhttp.Classify(&llmhttp.APIError{Status: 400, Code: "context_length_exceeded", Err: errors.New("POST /v1/chat/completions: 400 Bad Request")},
		nil, "prompt is too long: 208451 tokens > 200000 maximum")
	if got, ok := llmhttp.ParseOverflow(fmt.Errorf("call: %w", err)); !ok || got.Input != 208451 {
		t.Errorf("ParseOverflow = %+v, %v; want the message's counts", got, ok)
	}
}

// Whatever the text, ParseOverflow never panics, and what it reports is
// an overflow: a positive limit, counts at least 0, a total above the
// limit that holds the input and the output.
func FuzzParseOverflow(f *testing.F) {
	f.Add("This model's maximum context length is 128000 tokens. However, you requested 130532 tokens (126532 in the messages, 4000 in the completion).")
	f.Add("input length and `max_tokens` exceed context limit: 197202 + 21333 > 200000")
	f.Add("Request too large for x on tokens per min (TPM): Limit 30000, Requested 45000.")
	f.Add("The input token count (1054016) exceeds the maximum number of tokens allowed (1048576).")
	f.Add("is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens")
	f.Fuzz(func(t *testing.T, msg string) {
		o, ok := llmhttp.ParseOverflow(errors.New(msg))
		if !ok {
			if o != (llmhttp.Overflow{}) {
				t.Errorf("false with %+v; want the zero Overflow", o)
			}
			return
		}
		if o.Limit <= 0 || o.Input < 0 || o.Output < 0 || o.Requested <= o.Limit || o.Input > o.Requested || o.Output > o.Requested {
			t.Errorf("ParseOverflow(%q) = %+v: not an overflow", msg, o)
		}
	})
}

// Classify calls a request that no wait fixes permanent, whatever its
// status, and says why in its code; a 429 with room left is a rate limit.
func TestClassifyRequestsNoWaitFixes(t *testing.T) {
	for msg, want := range map[string]struct {
		code      string
		permanent bool
		dead      bool
	}{
		"Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 45000.":                                      {"request_too_large", true, false},
		"Budget has been exceeded! Current cost: 10.52, Max budget: 10.0":                                                                                {"budget_exceeded", true, true},
		"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29500, Requested 2000. Please try again in 3ms.": {"rate_limit_exceeded", false, false},
	} {
		a := &llmhttp.APIError{Status: 429, Code: "rate_limit_exceeded", Err: errors.New("429 Too Many Requests")}
		err := llmhttp.Classify(a, http.Header{"X-Should-Retry": {"true"}}, msg)
		retryable, decided := err.(interface{ Retryable() bool })
		if a.Code != want.code || a.Dead != want.dead || (decided && retryable.Retryable()) == want.permanent {
			t.Errorf("Classify(%.40q…): code %q, dead %v, verdict %v; want %q, %v, permanent %v", msg, a.Code, a.Dead, decided && retryable.Retryable(), want.code, want.dead, want.permanent)
		}
	}
}

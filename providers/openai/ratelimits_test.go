package openai_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3/option"

	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/providers/openai"
)

// withHeaders is reply with more headers.
func withHeaders(reply llmhttptest.Reply, kv ...string) llmhttptest.Reply {
	h := map[string]string{}
	for k, v := range reply.Header {
		h[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	reply.Header = h
	return reply
}

var openAILimits = []string{"x-ratelimit-limit-requests", "500", "x-ratelimit-remaining-requests", "3", "x-ratelimit-reset-requests", "2s",
	"x-ratelimit-limit-tokens", "30000", "x-ratelimit-remaining-tokens", "1200", "x-ratelimit-reset-tokens", "6m0s"}

// The Chat and Responses adapters read the rate limits of every response,
// successes and 429s alike, through the real client; malformed values
// change nothing.
func TestOpenAIReadsRateLimitsFromEveryResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := llmhttptest.New(
			withHeaders(completion("Hello"), openAILimits...),
			withHeaders(apiError(429, "requests", "rate_limit_exceeded"), "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1.5s"),
			withHeaders(completion("Hi"), "x-ratelimit-remaining-requests", "lots", "x-ratelimit-limit-tokens", "-1", "x-ratelimit-remaining-tokens", "-1"),
		)
		chat := openai.NewChat(model, option.WithAPIKey("k"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(srv.Client()))
		var _ interface {
			RateLimits() (llmhttp.RateLimits, bool)
		} = chat
		if _, ok := chat.RateLimits(); ok {
			t.Fatal("RateLimits() known before any response")
		}
		start := time.Now()
		if _, err := chat.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		r, ok := chat.RateLimits()
		if !ok || r.Requests.Remaining != 3 || r.Requests.Limit != 500 || !r.Requests.Reset.Equal(start.Add(2*time.Second)) ||
			r.Tokens.Remaining != 1200 || !r.Tokens.Reset.Equal(start.Add(6*time.Minute)) {
			t.Errorf("after a success: RateLimits() = %+v, %v; want 3 of 500 requests for 2s, 1200 tokens for 6m", r, ok)
		}
		_, _ = chat.Invoke(t.Context(), "q")
		// "1.5s" may be 1.5s rounded or cut to its tenth: up to 1.6s.
		if r, _ := chat.RateLimits(); r.Requests.Remaining != 0 || !r.Requests.Reset.Equal(start.Add(1600*time.Millisecond)) {
			t.Errorf("after a 429: requests %+v, want none left for 1.6s (1.5s and its last decimal's worth)", r.Requests)
		}
		_, _ = chat.Invoke(t.Context(), "q")
		if r, _ := chat.RateLimits(); r.Requests.Remaining != 0 {
			t.Errorf("after malformed headers: requests %+v, want the last good ones kept", r.Requests)
		}

		srv = llmhttptest.New(withHeaders(llmhttptest.JSON(200, responseJSON), openAILimits...))
		resp := openai.NewResponses(model, option.WithAPIKey("k"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(srv.Client()))
		if _, err := resp.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		if r, ok := resp.RateLimits(); !ok || r.Requests.Remaining != 3 {
			t.Errorf("Responses: RateLimits() = %+v, %v; want 3 requests left", r, ok)
		}
	})
}

const responseJSON = `{"id":"resp_1","object":"response","status":"completed","model":"gpt-test","output":[{"id":"m1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hello","annotations":[]}]}]}`

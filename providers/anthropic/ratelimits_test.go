package anthropic_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/anthropic"
)

// The Messages adapter reads the rate limits of every response through the
// real client, and keeps the last good ones over malformed headers.
func TestAnthropicReadsRateLimitsFromEveryResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reset := time.Now().Add(30 * time.Second).UTC().Truncate(time.Second)
		ok := message("Hello")
		ok.Header["anthropic-ratelimit-requests-limit"] = "50"
		ok.Header["anthropic-ratelimit-requests-remaining"] = "4"
		ok.Header["anthropic-ratelimit-requests-reset"] = reset.Format(time.RFC3339)
		ok.Header["anthropic-ratelimit-input-tokens-limit"] = "40000"
		ok.Header["anthropic-ratelimit-input-tokens-remaining"] = "39000"
		bad := message("Hi")
		bad.Header["anthropic-ratelimit-requests-remaining"] = "four"
		srv := llmhttptest.New(ok, bad)
		m := anthropic.NewMessages("claude-x", option.WithAPIKey("k"), option.WithBaseURL("http://anthropic.test/"), option.WithHTTPClient(srv.Client()))
		for range 2 {
			if _, err := m.Invoke(t.Context(), "q"); err != nil {
				t.Fatal(err)
			}
			r, known := m.RateLimits()
			if !known || r.Requests.Remaining != 4 || r.Requests.Limit != 50 || !r.Requests.Reset.Equal(reset) || r.InputTokens.Remaining != 39000 {
				t.Errorf("RateLimits() = %+v, %v; want 4 of 50 requests until %v, 39000 input tokens", r, known, reset)
			}
		}
	})
}

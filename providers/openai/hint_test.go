package openai_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// tpmLimited is OpenAI's 429 for a tokens-per-minute limit, which comes
// without Retry-After and says how long to wait in its message.
func tpmLimited(wait string) llmhttptest.Reply {
	return llmhttptest.JSON(429, `{"error":{"message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in `+wait+`. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`)
}

// A 429 without Retry-After whose message says how long to wait is
// retried after exactly that wait, through the real client.
func TestBodyHintIsTheWait(t *testing.T) {
	for wait, want := range map[string]time.Duration{"2.192s": 2192 * time.Millisecond, "20ms": 20 * time.Millisecond} {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, tpmLimited(wait), completion("Hello"))
			start := time.Now()
			out, err := h.R.Invoke(t.Context(), "Say hello")
			if err != nil || openai.Text(out) != "Hello" {
				t.Fatalf("Invoke() = %v, %v, want Hello", out, err)
			}
			if got := time.Since(start); got != want {
				t.Errorf("%s: waited %v, want the message's %v", wait, got, want)
			}
			if a := h.AttemptSpans(); len(a) != 2 || a[0]["retry.backoff.source"] != "retry_after" {
				t.Errorf("%s: attempt spans %v, want the first's backoff from the server's hint", wait, a)
			}
		})
	}
}

// A hint longer than the policy's MaxRetryAfter ends the call at once,
// like a Retry-After header would.
func TestBodyHintLongerThanMaxRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, tpmLimited("1m3s"), completion("unreachable"))
		_, err := h.R.Invoke(t.Context(), "Say hello")
		h.WantOutcome(t, err, retry.OutcomeRetryAfterTooLong, 1)
	})
}

// A quota that resets in days is not waited for: the call ends at once,
// as for any hint too long to wait (one outcome everywhere).
func TestBodyHintOfDaysIsTooLong(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, tpmLimited("2 days"), completion("unreachable"))
		_, err := h.R.Invoke(t.Context(), "Say hello")
		h.WantOutcome(t, err, retry.OutcomeRetryAfterTooLong, 1)
	})
}

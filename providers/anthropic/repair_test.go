package anthropic_test

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/anthropic"
	"github.com/steadfast-go/steadfast/retry"
)

// Anthropic's wordings of issue #42.
var (
	overflow     = llmhttptest.JSON(400, `{"type":"error","error":{"type":"invalid_request_error","message":"input length and `+"`max_tokens`"+` exceed context limit: 197202 + 21333 > 200000, decrease input length or `+"`max_tokens`"+` and try again"}}`)
	promptTooBig = llmhttptest.JSON(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208451 tokens > 200000 maximum"}}`)
	longContext  = llmhttptest.JSON(429, `{"type":"error","error":{"type":"rate_limit_error","message":"Extra usage is required for long context requests."}}`, "retry-after", "5")
)

func messagesUnder(t *testing.T, s *llmhttptest.Server, repair bool) *retry.RetryRunnable {
	t.Helper()
	m := anthropic.NewMessages(model, option.WithAPIKey("test-key"), option.WithBaseURL("http://anthropic.test/"), option.WithHTTPClient(s.Client()))
	cfg := llmhttptest.Config
	if repair {
		cfg.Repair = m.RepairOverflow
	}
	r, err := retry.New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The overflow is repaired at once with max_tokens lowered to what fits
// (21333 less the 18535 over: 2798); a prompt too long on its own is not
// repaired, one request; the long-context 429 is permanent, one request.
func TestRepairOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := llmhttptest.New(overflow, message("A summary"))
		in := ant.MessageNewParams{MaxTokens: 21333, Messages: []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock("a long document"))}}
		start := time.Now()
		out, err := messagesUnder(t, s, true).Invoke(t.Context(), in)
		if err != nil || anthropic.Text(out) != "A summary" {
			t.Fatalf("Invoke() = %v, %v; want the repaired call's answer", out, err)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("took %v; want the repair at once", took)
		}
		if b := s.Bodies(); len(b) != 2 || !strings.Contains(b[1], `"max_tokens":2798`) {
			t.Errorf("request bodies %q; want the second with max_tokens 2798", b)
		}
	})
	for name, reply := range map[string]llmhttptest.Reply{"prompt too long": promptTooBig, "long context not eligible": longContext} {
		synctest.Test(t, func(t *testing.T) {
			s := llmhttptest.New(reply, message("unreachable"))
			_, err := messagesUnder(t, s, true).Invoke(t.Context(), "a long document")
			if re, ok := errors.AsType[*retry.Error](err); !ok || re.Outcome != retry.OutcomeNotRetryable || s.Requests() != 1 {
				t.Errorf("%s: %v after %d requests; want not_retryable after 1", name, err, s.Requests())
			}
		})
	}
	if got := retry.ErrorType(anthropic.AdaptError(errorOf(t, longContext))); got != "long_context_not_eligible" {
		t.Errorf("long-context 429's error.type = %q; want long_context_not_eligible", got)
	}
}

// errorOf returns the SDK's error for reply.
func errorOf(t *testing.T, reply llmhttptest.Reply) error {
	t.Helper()
	s := llmhttptest.New(reply)
	m := ant.NewClient(option.WithAPIKey("k"), option.WithBaseURL("http://anthropic.test/"), option.WithHTTPClient(s.Client()), option.WithMaxRetries(0))
	_, err := m.Messages.New(t.Context(), ant.MessageNewParams{Model: model, MaxTokens: 10, Messages: []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock("q"))}})
	if err == nil {
		t.Fatal("no error")
	}
	return err
}

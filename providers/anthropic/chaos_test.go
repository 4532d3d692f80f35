package anthropic_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/steadfast-go/steadfast/chaos"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/anthropic"
	"github.com/steadfast-go/steadfast/retry"
)

// The faults of a chaos.Transport, in Anthropic's format (found by the
// request's path, /v1/messages), read by anthropic-sdk-go and this
// adapter: a 429 waited for as its Retry-After says, a 529 and an error
// event before the first delta retried, a spent balance and an overflow
// not retried.
func TestChaosFaultsThroughAnthropicSDK(t *testing.T) {
	for _, tc := range []struct {
		fault   chaos.Fault
		class   retry.Class
		took    time.Duration
		outcome retry.Outcome
		stream  bool
	}{
		{fault: chaos.RateLimited(2 * time.Second), class: retry.ClassRateLimit, took: 2 * time.Second},
		{fault: chaos.Overloaded(), class: retry.ClassOverloaded},
		{fault: chaos.QuotaExhausted(), outcome: retry.OutcomeNotRetryable},
		{fault: chaos.ContextOverflow(200000, 197202, 21333), outcome: retry.OutcomeNotRetryable},
		{fault: chaos.StreamError(1), stream: true},
	} {
		synctest.Test(t, func(t *testing.T) {
			srv := llmhttptest.New(message("Hello"), message("Hello"))
			if tc.stream {
				srv = llmhttptest.New(llmhttptest.SSE(start(), delta("Hel"), delta("lo"), stop()), llmhttptest.SSE(start(), delta("Hel"), delta("lo"), stop()))
			}
			m := anthropic.NewMessages(model, option.WithAPIKey("test-key"), option.WithBaseURL("http://127.0.0.1:9/"),
				option.WithHTTPClient(&http.Client{Transport: chaos.Transport(srv, tc.fault.First(1))}))
			var failed []error
			r, err := retry.New(m, retry.RetryConfig{MaxRetries: 2, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond},
				retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) { failed = append(failed, ev.Err) }))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			var text string
			if tc.stream {
				var ch <-chan any
				if ch, err = r.Stream(t.Context(), "Say hello"); err == nil {
					text, _ = llmhttptest.Drain(ch, anthropic.Text)
				}
			} else {
				var out any
				out, err = r.Invoke(t.Context(), "Say hello")
				text = anthropic.Text(out)
			}
			if tc.outcome != "" {
				var re *retry.Error
				if !errors.As(err, &re) || re.Outcome != tc.outcome || re.Attempts != 1 {
					t.Errorf("%s: %v, want %s after 1 attempt", tc.fault.Name(), err, tc.outcome)
				}
				return
			}
			if err != nil || text != "Hello" || len(failed) != 1 {
				t.Fatalf("%s: %q, %v after failed attempts %v; want Hello after one", tc.fault.Name(), text, err, failed)
			}
			if tc.class != "" && retry.ClassOf(failed[0]) != tc.class {
				t.Errorf("%s: the failed attempt's class is %s, want %s", tc.fault.Name(), retry.ClassOf(failed[0]), tc.class)
			}
			if took := time.Since(start); took < tc.took || took > tc.took+10*time.Millisecond {
				t.Errorf("%s: took %v, want %v and at most a backoff more", tc.fault.Name(), took, tc.took)
			}
		})
	}
}

package gemini_test

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/chaos"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/gemini"
	"github.com/steadfast-go/steadfast/retry"
)

// The faults of a chaos.Transport, in Gemini's format, read by genai and
// this adapter: RetryInfo's delay and a wait named only in the message are
// waited for; a per-day quota and an overflow are not retried.
func TestChaosFaultsThroughGenai(t *testing.T) {
	for _, tc := range []struct {
		fault   chaos.Fault
		took    time.Duration
		outcome retry.Outcome
	}{
		{fault: chaos.RateLimited(2 * time.Second), took: 2 * time.Second},
		{fault: chaos.RateLimitedInBody(1500 * time.Millisecond), took: 1500 * time.Millisecond},
		{fault: chaos.Overloaded()},
		{fault: chaos.QuotaExhausted(), outcome: retry.OutcomeNotRetryable},
		{fault: chaos.ContextOverflow(1048576, 1054016, 0), outcome: retry.OutcomeNotRetryable},
	} {
		synctest.Test(t, func(t *testing.T) {
			srv := llmhttptest.New(ok("Hello"))
			m := newModels(t, &http.Client{Transport: chaos.Transport(srv, tc.fault.First(1))})
			r, err := retry.New(m, retry.RetryConfig{MaxRetries: 2, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out, err := r.Invoke(t.Context(), "Say hello")
			if tc.outcome != "" {
				var re *retry.Error
				if !errors.As(err, &re) || re.Outcome != tc.outcome || re.Attempts != 1 {
					t.Errorf("%s: Invoke() = %v, want %s after 1 attempt", tc.fault.Name(), err, tc.outcome)
				}
				return
			}
			if err != nil || gemini.Text(out) != "Hello" {
				t.Fatalf("%s: Invoke() = %v, %v; want Hello", tc.fault.Name(), out, err)
			}
			if took := time.Since(start); took < tc.took || took > tc.took+10*time.Millisecond {
				t.Errorf("%s: took %v, want %v and at most a backoff more", tc.fault.Name(), took, tc.took)
			}
		})
	}
}

package llmhttp_test

import (
	"testing"
	"time"

	"github.com/steadfast-go/steadfast/llmhttp"
)

func TestBodyHint(t *testing.T) {
	for msg, want := range map[string]struct {
		wait      time.Duration
		permanent bool
		ok        bool
	}{
		"Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2.192s. Visit https://platform.openai.com/account/rate-limits": {2192 * time.Millisecond, false, true},
		"Please try again in 20ms.":                      {20 * time.Millisecond, false, true},
		"Rate limit reached. Please try again in 1m3s.":  {63 * time.Second, false, true},
		"please retry after 7 seconds":                   {7 * time.Second, false, true},
		"Please try again in 6h12m0.5s.":                 {6*time.Hour + 12*time.Minute + 500*time.Millisecond, false, true},
		"You exceeded your quota. Try again in 3 days.":  {0, true, true},
		"Request limit reached; please try again in 1d.": {0, true, true},
		"Please try again later.":                        {0, false, false},
		"try again in a moment":                          {0, false, false},
		"":                                               {0, false, false},
	} {
		wait, permanent, ok := llmhttp.BodyHint(msg)
		if wait != want.wait || permanent != want.permanent || ok != want.ok {
			t.Errorf("BodyHint(%q) = %v, %v, %v; want %v, %v, %v", msg, wait, permanent, ok, want.wait, want.permanent, want.ok)
		}
	}
}

func FuzzBodyHint(f *testing.F) {
	f.Add("Please try again in 2.192s.")
	f.Add("try again in 99999999999999999999999d")
	f.Fuzz(func(t *testing.T, msg string) {
		wait, permanent, ok := llmhttp.BodyHint(msg)
		if wait < 0 || (permanent && wait != 0) || (!ok && (wait != 0 || permanent)) {
			t.Errorf("BodyHint(%q) = %v, %v, %v", msg, wait, permanent, ok)
		}
	})
}

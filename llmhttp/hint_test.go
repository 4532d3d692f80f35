package llmhttp_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// classify429 classifies a 429 that said msg and no header.
func classify429(msg string) error {
	return llmhttp.Classify(&llmhttp.APIError{Status: 429, Err: errors.New(msg)}, nil, msg)
}

type retryable interface {
	error
	Retryable() bool
}

// A 429's message may say when to try again, as OpenAI's do when no
// Retry-After came; a wait of days is a hint like any other, left to the
// retry layer's MaxRetryAfter (retry_after_too_long), never a verdict.
func TestClassifyReadsTheWaitInA429sMessage(t *testing.T) {
	for msg, want := range map[string]time.Duration{
		"Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2.192s. Visit https://platform.openai.com/account/rate-limits": 2192 * time.Millisecond,
		"Please try again in 20ms.":                      20 * time.Millisecond,
		"Rate limit reached. Please try again in 1m3s.":  63 * time.Second,
		"please retry after 7 seconds":                   7 * time.Second,
		"Please try again in 6h12m0.5s.":                 6*time.Hour + 12*time.Minute + 500*time.Millisecond,
		"You exceeded your quota. Try again in 3 days.":  72 * time.Hour,
		"Request limit reached; please try again in 1d.": 24 * time.Hour,
		"Please try again later.":                        0,
		"try again in a moment":                          0,
		"":                                               0,
	} {
		err := classify429(msg)
		a, _ := errors.AsType[*llmhttp.APIError](err)
		if a == nil || a.RetryAfter() != want {
			t.Errorf("Classify(429, %q): RetryAfter = %v, want %v", msg, a.RetryAfter(), want)
		}
		if _, ok := errors.AsType[retryable](err); ok {
			t.Errorf("Classify(429, %q) has a verdict; a hint is never one", msg)
		}
	}
}

// A header's hint comes first; a body's hint is read for a 429 only.
func TestClassifyPrefersTheHeader(t *testing.T) {
	h := http.Header{"Retry-After": {"3"}}
	a := &llmhttp.APIError{Status: 429, Err: errors.New("x")}
	_ = llmhttp.Classify(a, h, "Please try again in 20ms.")
	if a.After != 3*time.Second {
		t.Errorf("After = %v, want the header's 3s", a.After)
	}
	b := &llmhttp.APIError{Status: 503, Err: errors.New("x")}
	_ = llmhttp.Classify(b, nil, "Please try again in 20ms.")
	if b.After != 0 {
		t.Errorf("a 503's message: After = %v, want none", b.After)
	}
}

func FuzzClassify429(f *testing.F) {
	f.Add("Please try again in 2.192s.")
	f.Add("try again in 99999999999999999999999d")
	f.Fuzz(func(t *testing.T, msg string) {
		a, _ := errors.AsType[*llmhttp.APIError](classify429(msg))
		if a == nil || a.RetryAfter() < 0 {
			t.Errorf("Classify(429, %q) = %v", msg, a)
		}
	})
}

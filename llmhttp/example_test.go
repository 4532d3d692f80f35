package llmhttp_test

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/steadfast-go/steadfast/llmhttp"
)

func ExampleRetryAfter() {
	h := http.Header{}
	h.Set("Retry-After", "2")
	d, ok := llmhttp.RetryAfter(h, time.Now())
	fmt.Println(d, ok)
	h.Set("retry-after-ms", "150") // preferred when both are sent
	d, ok = llmhttp.RetryAfter(h, time.Now())
	fmt.Println(d, ok)
	// Output:
	// 2s true
	// 150ms true
}

// An adapter turns an SDK's error into an APIError, and into a Verdict
// when the provider said whether to retry.
func ExampleVerdict() {
	sdkErr := errors.New("429 insufficient_quota")
	h := http.Header{}
	h.Set("x-should-retry", "false")
	var err error = &llmhttp.APIError{Status: 429, Code: "insufficient_quota", Err: sdkErr}
	if retry, ok := llmhttp.ShouldRetry(h); ok {
		err = &llmhttp.Verdict{APIError: err.(*llmhttp.APIError), Retry: retry}
	}
	var v interface{ Retryable() bool }
	fmt.Println(errors.As(err, &v), v.Retryable(), errors.Is(err, sdkErr))
	// Output: true false true
}

package llmhttp_test

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// An adapter turns an SDK's error into an APIError, says what its
// provider's code means (here a revoked key: Dead), and returns what
// Classify makes of it with the response's headers and message.
func ExampleClassify() {
	sdkErr := errors.New("401 invalid_api_key")
	h := http.Header{}
	h.Set("retry-after-ms", "150")
	a := &llmhttp.APIError{Status: 401, Code: "invalid_api_key", Err: sdkErr, Dead: true}
	err := llmhttp.Classify(a, h, "Incorrect API key provided")
	var v interface{ Retryable() bool }
	fmt.Println(errors.As(err, &v), v.Retryable(), errors.Is(err, sdkErr), a.RetryAfter(), a.CannotServe())
	// Output: true false true 150ms true
}

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

func ExampleParseOverflow() {
	err := llmhttp.Classify(&llmhttp.APIError{Status: 400, Code: "context_length_exceeded", Err: errors.New("400 Bad Request")}, nil,
		"This model's maximum context length is 128000 tokens. However, you requested 130532 tokens (126532 in the messages, 4000 in the completion).")
	o, ok := llmhttp.ParseOverflow(err)
	fmt.Printf("%+v %v\n", o, ok)
	fmt.Println("output that fits:", o.Output-(o.Requested-o.Limit))
	// Output:
	// {Limit:128000 Input:126532 Output:4000 Requested:130532} true
	// output that fits: 1468
}

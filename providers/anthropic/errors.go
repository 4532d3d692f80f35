package anthropic

import (
	"errors"
	"net/http"
	"strings"

	ant "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// permanentTypes are Anthropic error types that no retry fixes.
var permanentTypes = map[string]bool{
	"invalid_request_error": true,
	"authentication_error":  true,
	"permission_error":      true,
	"not_found_error":       true,
	"request_too_large":     true,
}

// AdaptError returns err as the retry layer should see it: an *ant.Error
// (an HTTP error, or an error event inside a stream) becomes an error with
// StatusCode(), RetryAfter(), ErrorType() and, when the API decided,
// Retryable(); the SDK's error stays reachable with errors.As. Other errors
// (the network's, the context's) are returned as they are.
func AdaptError(err error) error {
	if err == nil {
		return nil
	}
	ae, ok := errors.AsType[*ant.Error](err)
	if !ok {
		return err
	}
	typ := string(ae.Type())
	a := &llmhttp.APIError{Status: ae.StatusCode, Code: typ, Err: err}
	if a.Status < 400 {
		// An error event in a 200 stream: its type, not the status, says
		// what happened.
		a.Status = 0
	}
	var h http.Header
	if ae.Response != nil {
		h = ae.Response.Header
	}
	if a.Status == 0 {
		h = nil // an error event's headers are the 200's: they say nothing of it
	}
	a.Permanent = permanentTypes[typ]
	a.Dead = typ == "billing_error" // the account's billing, not the request
	msg := ae.Message
	if msg == "" {
		msg = err.Error() // the raw body, when it was not Anthropic's JSON
	}
	if typ == "rate_limit_error" && strings.Contains(strings.ToLower(msg), "long context") {
		// "Extra usage is required for long context requests.": the
		// credential may not send a request this long, however long it
		// waits. A shorter request, or another credential, is the fix.
		a.Code, a.Permanent = "long_context_not_eligible", true
	}
	return llmhttp.Classify(a, h, msg)
}

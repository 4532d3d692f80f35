package openai

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// deadCodes are OpenAI error codes that say the key's account cannot
// serve any request: its quota or its billing, not the request, is at
// fault. A 429 with insufficient_quota is a billing problem, not a rate
// limit.
var deadCodes = map[string]bool{
	"insufficient_quota":         true,
	"billing_hard_limit_reached": true,
	"billing_not_active":         true,
	"access_terminated":          true,
	"account_deactivated":        true,
}

// permanentCodes are OpenAI error codes and types of requests that no
// retry fixes.
var permanentCodes = map[string]bool{
	"context_length_exceeded":              true,
	"string_above_max_length":              true,
	"invalid_request_error":                true,
	"invalid_api_key":                      true,
	"model_not_found":                      true,
	"unsupported_country_region_territory": true,
}

// AdaptError returns err as the retry layer should see it: an *oai.Error
// (or an error event in a stream) becomes an error with StatusCode(),
// RetryAfter(), ErrorType() and, when the API decided, Retryable(); the
// SDK's error stays reachable with errors.As. Other errors (the network's,
// the context's) are returned as they are.
func AdaptError(err error) error {
	if err == nil {
		return nil
	}
	if ae, ok := errors.AsType[*oai.Error](err); ok {
		var h http.Header
		if ae.Response != nil {
			h = ae.Response.Header
		}
		return llmhttp.Classify(apiError(overloadStatus(ae.StatusCode, ae.Message), ae.Code, ae.Type, err), h, ae.Message)
	}
	if se, ok := errors.AsType[*ssestream.StreamError](err); ok {
		var body struct {
			Error struct {
				Code *string `json:"code"`
				Type string  `json:"type"`
			} `json:"error"`
		}
		_ = json.Unmarshal(se.Event.Data, &body) // a malformed event keeps its plain message
		code := body.Error.Type
		if body.Error.Code != nil {
			code = first(*body.Error.Code, code)
		}
		return llmhttp.Classify(apiError(0, code, body.Error.Type, err), nil, "")
	}
	return err
}

// overloadStatus is the status an answer of status and message means: a
// 400 whose message says the servers are overloaded (OpenAI sends one
// now and then) is the 503 it means, an overload to retry, not a bad
// request.
func overloadStatus(status int, message string) int {
	if status == http.StatusBadRequest && strings.Contains(strings.ToLower(message), "overloaded") {
		return http.StatusServiceUnavailable
	}
	return status
}

// apiError is OpenAI's error of status, code and type, with what they
// say of it.
func apiError(status int, code, typ string, err error) *llmhttp.APIError {
	return &llmhttp.APIError{
		Status: status, Code: first(code, typ), Err: err,
		Dead:      deadCodes[code] || deadCodes[typ],
		Permanent: permanentCodes[code] || permanentCodes[typ],
	}
}

// first returns the code a, unless it is empty or only digits (the
// status, which OpenAI-compatible gateways echo as a code), else b.
func first(a, b string) string {
	if a != "" && strings.Trim(a, "0123456789") != "" {
		return a
	}
	return b
}

package openai

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// permanentCodes are OpenAI error codes and types that no retry fixes. A
// 429 with insufficient_quota is a billing problem, not a rate limit.
var permanentCodes = map[string]bool{
	"insufficient_quota":                   true,
	"billing_hard_limit_reached":           true,
	"billing_not_active":                   true,
	"access_terminated":                    true,
	"account_deactivated":                  true,
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
		a := &llmhttp.APIError{Status: ae.StatusCode, Code: first(ae.Code, ae.Type), Err: err}
		a.After, _ = llmhttp.RetryAfter(h, time.Now())
		if retry, ok := llmhttp.ShouldRetry(h); ok {
			return &llmhttp.Verdict{APIError: a, Retry: retry}
		}
		if permanentCodes[ae.Code] || permanentCodes[ae.Type] {
			return &llmhttp.Verdict{APIError: a, Retry: false}
		}
		return llmhttp.WithBodyHint(a, ae.Message)
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
		a := &llmhttp.APIError{Code: code, Err: err}
		if permanentCodes[code] || permanentCodes[body.Error.Type] {
			return &llmhttp.Verdict{APIError: a, Retry: false}
		}
		return a
	}
	return err
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

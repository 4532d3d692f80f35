package gemini

import (
	"errors"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// The @type of the google.rpc error details the adapter reads.
const (
	retryInfoType    = "type.googleapis.com/google.rpc.RetryInfo"
	quotaFailureType = "type.googleapis.com/google.rpc.QuotaFailure"
)

// AdaptError returns err as the retry layer should see it: a
// genai.APIError becomes an error with StatusCode(), RetryAfter() (the
// RetryInfo detail's retryDelay, else, for a 429, a wait its message
// names: "Please retry in 16.5s."), ErrorType() (the API's status) and, for a
// per-day quota, Retryable() false; the SDK's error stays reachable with
// errors.As. Other errors (the network's, the context's) are returned as
// they are.
func AdaptError(err error) error {
	if err == nil {
		return nil
	}
	ae, ok := errors.AsType[genai.APIError](err)
	if !ok {
		return err
	}
	a := &llmhttp.APIError{Status: ae.Code, Code: ae.Status, Err: err}
	for _, d := range ae.Details {
		switch d["@type"] {
		case retryInfoType:
			a.After = retryDelay(d["retryDelay"])
		case quotaFailureType:
			// A per-day quota is spent for the day: the key cannot
			// serve, whatever the request.
			a.Dead = a.Dead || perDay(d["violations"])
		}
	}
	return llmhttp.Classify(a, nil, ae.Message) // a 429's message may name its wait: "Please retry in 16.5s."
}

// retryDelay reads a google.protobuf.Duration in its JSON form ("30s",
// "1.5s"); anything else is no hint.
func retryDelay(v any) time.Duration {
	s, _ := v.(string)
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// perDay reports a quota violation of a per-day quota, which no retry
// within the day refills.
func perDay(v any) bool {
	violations, _ := v.([]any)
	for _, x := range violations {
		m, _ := x.(map[string]any)
		for _, key := range []string{"quotaId", "quotaMetric"} {
			if s, _ := m[key].(string); strings.Contains(strings.ToLower(s), "perday") || strings.Contains(strings.ToLower(s), "per_day") {
				return true
			}
		}
	}
	return false
}

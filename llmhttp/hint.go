package llmhttp

import (
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// hintPattern finds a wait in an error's message: "try again in 2.192s",
// "Please retry after 20ms", "try again in 1m3s", "retry in 2 days".
var hintPattern = regexp.MustCompile(`(?i)\b(?:try again|retry)\s+(?:in|after)\s+((?:\d+(?:\.\d+)?\s*(?:ms|milliseconds?|seconds?|secs?|s|minutes?|mins?|m|hours?|h|days?|d)\s*(?:and\s+)?)+)(?:[^a-z]|$)`)

// hintPart is one number and unit of a hint.
var hintPart = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(ms|milliseconds?|seconds?|secs?|s|minutes?|mins?|m|hours?|h|days?|d)`)

// bodyHint reads a wait that an error's message asks for, as OpenAI's
// rate-limit messages do when no Retry-After header came ("Please try
// again in 2.192s"). A message without such a wait, or with a malformed
// one, gives no hint. A long wait is a hint like any other: the retry
// layer's MaxRetryAfter decides whether it is worth waiting
// (retry_after_too_long), as for a header's.
func bodyHint(message string) (wait time.Duration, ok bool) {
	m := hintPattern.FindStringSubmatch(message)
	if m == nil {
		return 0, false
	}
	var total float64 // seconds
	for _, part := range hintPart.FindAllStringSubmatch(m[1], -1) {
		n, err := strconv.ParseFloat(part[1], 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return 0, false
		}
		total += n * unitSeconds(strings.ToLower(part[2]))
	}
	if total >= float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(total * float64(time.Second)), true
}

func unitSeconds(unit string) float64 {
	switch {
	case unit == "ms" || strings.HasPrefix(unit, "milli"):
		return 1e-3
	case unit == "m" || strings.HasPrefix(unit, "min"):
		return 60
	case unit == "h" || strings.HasPrefix(unit, "hour"):
		return 3600
	case unit == "d" || strings.HasPrefix(unit, "day"):
		return 86400
	}
	return 1 // s, sec, second(s)
}

// Classify returns a, an error an adapter built from a provider's
// answer, as the retry layer should read it, with what the answer said:
// h are its headers (nil for an error event inside a stream) and message
// its error message. In order:
//
//   - a request that no wait fixes, whatever its status, is not
//     retryable, and a.Code says why: "request_too_large" when the
//     message says the request needs more tokens than the per-minute
//     limit itself (OpenAI's 429 "Request too large … Limit 30000,
//     Requested 45000"; one with room left, "Used 29500, Requested 2000",
//     is a rate limit like any other), "budget_exceeded" for a gateway's
//     spend budget ("Budget has been exceeded", LiteLLM's), which also
//     sets a.Dead: the key cannot serve until its budget resets;
//   - else an x-should-retry header is the server's own verdict;
//   - a.Permanent or a.Dead: not retryable;
//   - the server's hint, from retry-after-ms, else Retry-After, else, for
//     a 429 whose headers gave none, a wait in its message ("Please try
//     again in 2.192s"), becomes a.After unless the adapter set one.
//
// A hint is never a verdict: however long, it is left to the retry
// layer's MaxRetryAfter (outcome retry_after_too_long).
func Classify(a *APIError, h http.Header, message string) error {
	if a.Message == "" {
		a.Message = message
	}
	if a.After == 0 {
		a.After, _ = retryAfter(h, time.Now())
	}
	if a.After == 0 && a.Status == http.StatusTooManyRequests {
		a.After, _ = bodyHint(message)
	}
	if unfixable(a, message) {
		return &verdict{APIError: a}
	}
	if retry, ok := shouldRetry(h); ok {
		return &verdict{APIError: a, retry: retry}
	}
	if a.Permanent || a.Dead {
		return &verdict{APIError: a}
	}
	return a
}

// unfixable reports a request that no wait fixes, though it may come as a
// 429, and names why in a.Code. The message proves it, so it wins over an
// x-should-retry header.
func unfixable(a *APIError, message string) bool {
	switch {
	case strings.Contains(message, "Request too large for"):
		if _, ok := parseOverflow(message); !ok {
			return false // a wording without numbers that add up: a rate limit
		}
		a.Code = "request_too_large"
	case a.Code == "budget_exceeded" || strings.Contains(message, "Budget has been exceeded"):
		a.Code, a.Dead = "budget_exceeded", true
	default:
		return false
	}
	a.Permanent = true
	return true
}

// verdict is an APIError whose retryability the provider decided.
type verdict struct {
	*APIError
	retry bool
}

// Retryable reports the provider's verdict (retry rule 2).
func (v *verdict) Retryable() bool { return v.retry }

// Unwrap returns the APIError.
func (v *verdict) Unwrap() error { return v.APIError }

// shouldRetry reads the x-should-retry header: its verdict, and whether
// the server sent one.
func shouldRetry(h http.Header) (retry, ok bool) {
	switch h.Get("x-should-retry") {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

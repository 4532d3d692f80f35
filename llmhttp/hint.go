package llmhttp

import (
	"math"
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

// BodyHint reads a wait that an error's message asks for, as OpenAI's
// rate-limit messages do when no Retry-After header came ("Please try
// again in 2.192s"). It returns the wait and true; permanent is set when
// the wait is a day or more (a quota that resets in days is not worth
// waiting for: no retry helps). A message without such a wait, or with a
// malformed one, gives no hint.
func BodyHint(message string) (wait time.Duration, permanent, ok bool) {
	m := hintPattern.FindStringSubmatch(message)
	if m == nil {
		return 0, false, false
	}
	var total float64 // seconds
	for _, part := range hintPart.FindAllStringSubmatch(m[1], -1) {
		n, err := strconv.ParseFloat(part[1], 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return 0, false, false
		}
		total += n * unitSeconds(strings.ToLower(part[2]))
	}
	if total >= (24 * time.Hour).Seconds() {
		return 0, true, true
	}
	return time.Duration(total * float64(time.Second)), false, true
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

// WithBodyHint gives a 429 without a header's hint the hint its message
// carries (BodyHint): a wait becomes its RetryAfter; a wait of days makes
// it permanent. Any other error is returned as it is.
func WithBodyHint(a *APIError, message string) error {
	if a.Status != 429 || a.After > 0 {
		return a
	}
	wait, permanent, ok := BodyHint(message)
	switch {
	case !ok:
		return a
	case permanent:
		return &Verdict{APIError: a, Retry: false}
	}
	a.After = wait
	return a
}

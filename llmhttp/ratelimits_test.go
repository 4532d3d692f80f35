package llmhttp_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/steadfast-go/steadfast/llmhttp"
)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestParseRateLimits(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	known := func(limit, rem int64, reset time.Duration) llmhttp.Limit {
		l := llmhttp.Limit{Known: true, Limit: limit, Remaining: rem}
		if reset >= 0 {
			l.Reset = now.Add(reset)
		}
		return l
	}
	for name, tc := range map[string]struct {
		h                http.Header
		requests, tokens llmhttp.Limit
	}{
		"OpenAI": {header("x-ratelimit-limit-requests", "500", "x-ratelimit-remaining-requests", "499", "x-ratelimit-reset-requests", "120ms",
			"x-ratelimit-limit-tokens", "30000", "x-ratelimit-remaining-tokens", "29000", "x-ratelimit-reset-tokens", "6m0s"),
			known(500, 499, 120*time.Millisecond), known(30000, 29000, 6*time.Minute)},
		"Groq's hundredths": {header("x-ratelimit-limit-requests", "4", "x-ratelimit-remaining-requests", "3", "x-ratelimit-reset-requests", "0.39s",
			"x-ratelimit-limit-tokens", "6000", "x-ratelimit-remaining-tokens", "5990", "x-ratelimit-reset-tokens", "2m59.5s"),
			known(4, 3, 400*time.Millisecond), known(6000, 5990, 2*time.Minute+59600*time.Millisecond)},
		"Anthropic": {header("anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "49",
			"anthropic-ratelimit-requests-reset", "2026-12-01T12:00:01Z",
			"anthropic-ratelimit-tokens-limit", "40000", "anthropic-ratelimit-tokens-remaining", "0", "anthropic-ratelimit-tokens-reset", "2026-12-01T12:00:30Z"),
			known(50, 49, time.Second), known(40000, 0, 30*time.Second)},
		"Anthropic in milliseconds": {header("anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "49",
			"anthropic-ratelimit-requests-reset", "2026-12-01T12:00:01.250Z"),
			known(50, 49, 1251*time.Millisecond), llmhttp.Limit{}},
		"IETF structured": {header("RateLimit", `"default";r=50;t=30`, "RateLimit-Policy", `"default";q=100;w=60`),
			known(100, 50, 30*time.Second), llmhttp.Limit{}},
		"IETF older draft": {header("RateLimit", "limit=100, remaining=7, reset=5"),
			known(100, 7, 5*time.Second), llmhttp.Limit{}},
		"Azure's -1 and 0 are ignored": {header("x-ratelimit-limit-requests", "-1", "x-ratelimit-remaining-requests", "-1",
			"x-ratelimit-limit-tokens", "0", "x-ratelimit-remaining-tokens", "0"), llmhttp.Limit{}, llmhttp.Limit{}},
		"malformed": {header("x-ratelimit-limit-requests", "many", "x-ratelimit-remaining-requests", "4.5",
			"x-ratelimit-limit-tokens", "100", "x-ratelimit-remaining-tokens", "200",
			"RateLimit", "r=abc"), llmhttp.Limit{}, llmhttp.Limit{}},
		"a bad reset keeps the count": {header("x-ratelimit-remaining-requests", "3", "x-ratelimit-reset-requests", "soon"),
			known(0, 3, -1), llmhttp.Limit{}},
		"none": {http.Header{}, llmhttp.Limit{}, llmhttp.Limit{}},
	} {
		got := llmhttp.ParseRateLimits(tc.h, now)
		if got.Requests != tc.requests || got.Tokens != tc.tokens {
			t.Errorf("%s: requests %+v, tokens %+v; want %+v, %+v", name, got.Requests, got.Tokens, tc.requests, tc.tokens)
		}
	}
}

func TestRateLimitTrackerKeepsTheLastThatSaidAnything(t *testing.T) {
	var tr llmhttp.RateLimitTracker
	if _, ok := tr.RateLimits(); ok {
		t.Fatal("a new tracker knows limits")
	}
	tr.Observe(&http.Response{Header: header("x-ratelimit-remaining-requests", "9")})
	tr.Observe(&http.Response{Header: http.Header{}}) // says nothing: kept
	tr.Observe(nil)
	if r, ok := tr.RateLimits(); !ok || r.Requests.Remaining != 9 {
		t.Errorf("RateLimits() = %+v, %v, want 9 requests left", r, ok)
	}
}

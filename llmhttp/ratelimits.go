package llmhttp

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// RateLimits is what a response's headers say of a provider's limits:
// the requests and tokens left, and when each limit resets. Providers send
// them with every response, successes included, so a client can slow down
// before the provider answers 429.
type RateLimits struct {
	At       time.Time // when the response that said them was received
	Requests Limit     // requests per window
	Tokens   Limit     // tokens per window (Anthropic: input and output together)
	// InputTokens and OutputTokens are Anthropic's separate token limits.
	InputTokens, OutputTokens Limit
}

// Limit is one limit: how many calls or tokens the window allows, how
// many are left, and when the window resets. Known is false when the
// headers said nothing usable of it.
//
// Reset is the reset as written, plus the worth of its last decimal when
// it has decimals: a provider that writes "0.39s" (Groq, for 394.7 ms)
// rounds, and a call paced to the reset as written reaches the old
// window.
type Limit struct {
	Known     bool
	Limit     int64 // 0 when not sent
	Remaining int64
	Reset     time.Time // zero when not sent
}

// any reports whether any limit is known.
func (r RateLimits) any() bool {
	return r.Requests.Known || r.Tokens.Known || r.InputTokens.Known || r.OutputTokens.Known
}

// parseRateLimits reads the limits in h, a response's headers received at
// now: OpenAI's x-ratelimit-{limit,remaining,reset}-{requests,tokens}
// (resets as durations: "1s", "6m0s", "20ms"), Anthropic's
// anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}
// (resets in RFC 3339), and the IETF RateLimit and RateLimit-Policy fields
// (both the structured form `"default";r=50;t=30` and the older
// `limit=100, remaining=50, reset=30`). A malformed, negative or absent
// value leaves its limit unknown, and so does a limit of 0 or -1, which
// Azure OpenAI sends when it has none to say: such values are ignored,
// never obeyed.
func parseRateLimits(h http.Header, now time.Time) RateLimits {
	var r RateLimits
	r.Requests = openAILimit(h, "requests", now)
	r.Tokens = openAILimit(h, "tokens", now)
	for name, l := range map[string]*Limit{"requests": &r.Requests, "tokens": &r.Tokens,
		"input-tokens": &r.InputTokens, "output-tokens": &r.OutputTokens} {
		if a := anthropicLimit(h, name); a.Known && !l.Known {
			*l = a
		}
	}
	if !r.Requests.Known {
		r.Requests = ietfLimit(h, now)
	}
	return r
}

func openAILimit(h http.Header, kind string, now time.Time) Limit {
	l := limitOf(h.Get("x-ratelimit-limit-"+kind), h.Get("x-ratelimit-remaining-"+kind))
	if !l.Known {
		return Limit{}
	}
	reset := strings.TrimSpace(h.Get("x-ratelimit-reset-" + kind))
	if d, err := time.ParseDuration(reset); err == nil && d >= 0 {
		l.Reset = now.Add(d + lastDecimal(reset))
	}
	return l
}

func anthropicLimit(h http.Header, kind string) Limit {
	prefix := "anthropic-ratelimit-" + kind + "-"
	l := limitOf(h.Get(prefix+"limit"), h.Get(prefix+"remaining"))
	if !l.Known {
		return Limit{}
	}
	reset := strings.TrimSpace(h.Get(prefix + "reset"))
	if t, err := time.Parse(time.RFC3339, reset); err == nil {
		l.Reset = t.Add(lastDecimal(reset))
	}
	return l
}

// limitOf reads a limit and what is left of it. A remaining count is
// needed; a limit of 0 or less (Azure's -1 and 0) makes the pair unknown.
func limitOf(limit, remaining string) Limit {
	rem, err := strconv.ParseInt(strings.TrimSpace(remaining), 10, 64)
	if err != nil || rem < 0 {
		return Limit{}
	}
	l := Limit{Known: true, Remaining: rem}
	if limit = strings.TrimSpace(limit); limit != "" {
		n, err := strconv.ParseInt(limit, 10, 64)
		if err != nil || n <= 0 || rem > n {
			return Limit{}
		}
		l.Limit = n
	}
	return l
}

// ietfLimit reads the IETF RateLimit field (and RateLimit-Policy for the
// limit): `"default";r=50;t=30` or `limit=100, remaining=50, reset=30`.
func ietfLimit(h http.Header, now time.Time) Limit {
	f := ietfParams(h.Get("RateLimit"))
	rem, okR := f["r"]
	if !okR {
		rem, okR = f["remaining"]
	}
	if !okR || rem < 0 {
		return Limit{}
	}
	l := Limit{Known: true, Remaining: rem}
	reset, ok := f["t"]
	if !ok {
		reset, ok = f["reset"]
	}
	if ok && reset >= 0 {
		l.Reset = now.Add(time.Duration(reset) * time.Second)
	}
	limit, ok := f["limit"]
	if !ok {
		limit, ok = ietfParams(h.Get("RateLimit-Policy"))["q"]
	}
	if ok {
		if limit <= 0 || rem > limit {
			return Limit{}
		}
		l.Limit = limit
	}
	return l
}

// ietfParams reads the integer parameters of a RateLimit or
// RateLimit-Policy field, of its first item; a malformed one is left out.
func ietfParams(v string) map[string]int64 {
	out := map[string]int64{}
	if v = strings.TrimSpace(v); v == "" {
		return out
	}
	sep := ";"
	if !strings.Contains(v, ";") {
		sep = "," // the older draft: limit=100, remaining=50, reset=30
	} else if i := strings.Index(v, ","); i >= 0 {
		v = v[:i] // the first policy only
	}
	for _, p := range strings.Split(v, sep) {
		k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64); err == nil {
			out[strings.ToLower(strings.TrimSpace(k))] = n
		}
	}
	return out
}

// RateLimitTracker keeps the rate limits of the last response that said
// anything of them. Its zero value is ready; it is safe for concurrent
// use, and Observe takes no lock.
type RateLimitTracker struct {
	last atomic.Pointer[RateLimits]
}

// Observe reads resp's headers (a nil resp is ignored).
func (t *RateLimitTracker) Observe(resp *http.Response) {
	if resp == nil {
		return
	}
	now := time.Now()
	if r := parseRateLimits(resp.Header, now); r.any() {
		r.At = now
		t.last.Store(&r)
	}
}

// RateLimits returns what the last response that said anything of them
// said, and whether one did. A Runnable that embeds a RateLimitTracker
// (the providers' adapters do) has this method, by which the ratelimit and
// pool packages find its limits through the decorators that wrap it.
func (t *RateLimitTracker) RateLimits() (RateLimits, bool) {
	if r := t.last.Load(); r != nil {
		return *r, true
	}
	return RateLimits{}, false
}

// lastDecimal is the worth of the last decimal of a reset: 10ms in
// "0.39s" and "2m59.56s", 1ms in "2026-12-01T12:00:01.250Z" (the unit is
// the one after the number, or seconds), none in "1s" or "120ms".
func lastDecimal(reset string) time.Duration {
	dot := strings.LastIndexByte(reset, '.')
	if dot < 0 {
		return 0
	}
	end := dot + 1
	for end < len(reset) && isDigit(reset[end]) {
		end++
	}
	unit := time.Second
	if u, err := time.ParseDuration("1" + reset[end:]); err == nil {
		unit = u
	}
	for range end - dot - 1 {
		unit /= 10
	}
	return unit
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

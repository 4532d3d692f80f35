package pace_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/internal/pace"
	"github.com/steadfast-go/steadfast/llmhttp"
)

// k requests left until the reset: k calls go, the next waits for the
// reset; a newer response counts again from what it says.
func TestPaceWaitsForTheResetOnceNoneIsLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tr llmhttp.RateLimitTracker
		p := pace.New(&tr)
		if w := p.Reserve(time.Now(), 0).Delay; w != 0 {
			t.Fatalf("before any response: wait %v, want none", w)
		}
		tr.Observe(&http.Response{Header: header("x-ratelimit-remaining-requests", "2", "x-ratelimit-reset-requests", "1s",
			"x-ratelimit-remaining-tokens", "100", "x-ratelimit-reset-tokens", "3s")})
		now := time.Now()
		if a, b := p.Reserve(now, 0).Delay, p.Reserve(now, 0).Delay; a != 0 || b != 0 {
			t.Errorf("two calls with two left: waits %v, %v, want none", a, b)
		}
		if w := p.Reserve(now, 0).Delay; w != time.Second {
			t.Errorf("a third call: wait %v, want the reset's 1s", w)
		}
		if w := p.Wait(now.Add(time.Second), 0); w != 0 {
			t.Errorf("after the reset: wait %v, want none", w)
		}

		time.Sleep(time.Second) // an answer of the next window
		tr.Observe(&http.Response{Header: header("x-ratelimit-remaining-requests", "5", "x-ratelimit-reset-requests", "1s",
			"x-ratelimit-remaining-tokens", "100", "x-ratelimit-reset-tokens", "3s")})
		now = time.Now()
		if w := p.Reserve(now, 80).Delay; w != 0 {
			t.Errorf("80 tokens of 100: wait %v, want none", w)
		}
		if w := p.Reserve(now, 30).Delay; w != 3*time.Second {
			t.Errorf("30 more tokens of the 20 left: wait %v, want the tokens' reset, 3s", w)
		}
	})
}

// Answers come back out of order: a slow answer's headers are as old as
// its request. One that says more is left in the same window than the
// counts kept since a fresher one is stale, and changes nothing.
func TestPaceIgnoresAStaleAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tr llmhttp.RateLimitTracker
		p := pace.New(&tr)
		tr.Observe(&http.Response{Header: header("x-ratelimit-limit-requests", "10", "x-ratelimit-remaining-requests", "1", "x-ratelimit-reset-requests", "1s")})
		now := time.Now()
		if w := p.Reserve(now, 0).Delay; w != 0 {
			t.Fatalf("the one call left: wait %v", w)
		}
		time.Sleep(10 * time.Millisecond)
		// A slow answer, generated when 6 were left, received now.
		tr.Observe(&http.Response{Header: header("x-ratelimit-limit-requests", "10", "x-ratelimit-remaining-requests", "6", "x-ratelimit-reset-requests", "1s")})
		if w := p.Reserve(time.Now(), 0).Delay; w == 0 {
			t.Error("after a stale answer saying 6 left: no wait, want the reset (none is left)")
		}
		// An answer saying less than the counts is taken.
		tr.Observe(&http.Response{Header: header("x-ratelimit-limit-requests", "10", "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "500ms")})
		if w := p.Wait(time.Now(), 0); w != 500*time.Millisecond {
			t.Errorf("after an answer saying none is left: wait %v, want its 500ms", w)
		}
	})
}

// After the reset, until an answer of the new window comes, the calls take
// from the window's whole limit: they do not all go at once.
func TestPaceAfterTheResetTakesFromTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tr llmhttp.RateLimitTracker
		p := pace.New(&tr)
		tr.Observe(&http.Response{Header: header("x-ratelimit-limit-requests", "3", "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "200ms")})
		time.Sleep(200 * time.Millisecond)
		now := time.Now()
		for i := range 3 {
			if w := p.Reserve(now, 0).Delay; w != 0 {
				t.Fatalf("call %d after the reset: wait %v, want none (3 allowed)", i, w)
			}
		}
		if w := p.Reserve(now, 0).Delay; w <= 0 {
			t.Errorf("a fourth call after the reset: wait %v, want one (the limit is 3)", w)
		}
	})
}

// The first answer of a new window does not count the calls sent since
// the reset that had not reached the provider yet: those are carried
// over, not forgotten.
func TestPaceCarriesTheCallsAnAnswerDoesNotCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tr llmhttp.RateLimitTracker
		p := pace.New(&tr)
		tr.Observe(&http.Response{Header: header("x-ratelimit-limit-requests", "5", "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "200ms")})
		time.Sleep(200 * time.Millisecond)
		now := time.Now()
		for range 3 { // after the reset, three sent; the first one's answer comes back
			p.Reserve(now, 0)
		}
		tr.Observe(&http.Response{Header: header("x-ratelimit-limit-requests", "5", "x-ratelimit-remaining-requests", "4", "x-ratelimit-reset-requests", "1s")})
		for i := range 2 {
			if w := p.Reserve(now, 0).Delay; w != 0 {
				t.Fatalf("call %d of the 2 left (4, less the two on their way): wait %v", i, w)
			}
		}
		if w := p.Reserve(now, 0).Delay; w == 0 {
			t.Error("a third call: no wait, want the reset: the two calls on their way take what is left")
		}
	})
}

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

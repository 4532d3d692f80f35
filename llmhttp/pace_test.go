package llmhttp_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// k requests left until the reset: k calls go, the next waits for the
// reset; a newer response counts again from what it says.
func TestHeaderPaceWaitsForTheResetOnceNoneIsLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tr llmhttp.RateLimitTracker
		p := llmhttp.NewHeaderPace(&tr)
		if w := p.Reserve(time.Now(), 0); w != 0 {
			t.Fatalf("before any response: wait %v, want none", w)
		}
		tr.Observe(&http.Response{Header: header("x-ratelimit-remaining-requests", "2", "x-ratelimit-reset-requests", "1s",
			"x-ratelimit-remaining-tokens", "100", "x-ratelimit-reset-tokens", "3s")})
		now := time.Now()
		if a, b := p.Reserve(now, 0), p.Reserve(now, 0); a != 0 || b != 0 {
			t.Errorf("two calls with two left: waits %v, %v, want none", a, b)
		}
		if w := p.Reserve(now, 0); w != time.Second {
			t.Errorf("a third call: wait %v, want the reset's 1s", w)
		}
		if w := p.Wait(now.Add(time.Second), 0); w != 0 {
			t.Errorf("after the reset: wait %v, want none", w)
		}

		time.Sleep(time.Millisecond)
		tr.Observe(&http.Response{Header: header("x-ratelimit-remaining-requests", "5", "x-ratelimit-reset-requests", "1s",
			"x-ratelimit-remaining-tokens", "100", "x-ratelimit-reset-tokens", "3s")})
		now = time.Now()
		if w := p.Reserve(now, 80); w != 0 {
			t.Errorf("80 tokens of 100: wait %v, want none", w)
		}
		if w := p.Reserve(now, 30); w != 3*time.Second {
			t.Errorf("30 more tokens of the 20 left: wait %v, want the tokens' reset, 3s", w)
		}
	})
}

package fleet_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fleet"
	"github.com/steadfast-go/steadfast/llmhttp"
)

// saidAt is what a response received at at said: left of limit requests
// until reset.
func saidAt(at time.Time, left, limit int64, reset time.Duration) llmhttp.RateLimits {
	return llmhttp.RateLimits{At: at, Requests: llmhttp.Limit{Known: true, Limit: limit, Remaining: left, Reset: at.Add(reset)}}
}

// reserve is one call's ReserveHeaders, failing the test on an error.
func reserve(t *testing.T, l *fleet.Limiter, limits llmhttp.RateLimits, tokens int) time.Duration {
	t.Helper()
	res, err := l.ReserveHeaders(t.Context(), limits, tokens)
	if err != nil {
		t.Fatal(err)
	}
	return res.Delay
}

// parts is a Reservation's delay and whether it is OK, with the error.
func parts(res core.Reservation, err error) (time.Duration, bool, error) {
	return res.Delay, res.OK, err
}

// Two replicas count against one answer together: of 3 left, the first
// takes 2 and the second 1, and the next call of either waits for the
// reset, whichever answer it last received.
func TestReplicasCountAgainstTheHeadersTogether(t *testing.T) {
	c := client(t)
	key := uniqueKey(t)
	a := newLimiter(t, c, key, 100, 10)
	b := newLimiter(t, dial(t, c.Options().Addr), key, 100, 10)
	seen := saidAt(time.Now(), 3, 10, time.Minute)
	for i, l := range []*fleet.Limiter{a, a, b} {
		if w := reserve(t, l, seen, 0); w != 0 {
			t.Fatalf("call %d of the 3 left: wait %v, want none", i, w)
		}
	}
	for name, l := range map[string]*fleet.Limiter{"a": a, "b": b} {
		if w := reserve(t, l, seen, 0); w < 59*time.Second || w > time.Minute {
			t.Errorf("replica %s, a fourth call: wait %v, want the reset's minute", name, w)
		}
	}
	// A slow answer, sent when 6 were left and received later, is stale:
	// it changes nothing.
	if w := reserve(t, b, saidAt(time.Now(), 6, 10, time.Minute), 0); w == 0 {
		t.Error("after a stale answer saying 6 left: no wait, want the reset")
	}
}

// An answer saying less is left than the fleet counted (others used the
// key) is taken; after the reset the fleet's calls take from the whole
// limit until an answer of the new window comes.
func TestTheFleetsCountTakesOthersUseAndTheReset(t *testing.T) {
	c := client(t)
	l := newLimiter(t, c, uniqueKey(t), 100, 10)
	start := time.Now()
	if w := reserve(t, l, saidAt(start, 5, 6, 300*time.Millisecond), 0); w != 0 {
		t.Fatalf("5 left: wait %v", w)
	}
	time.Sleep(5 * time.Millisecond)
	lower := saidAt(time.Now(), 1, 6, 295*time.Millisecond) // others took 3
	if w := reserve(t, l, lower, 0); w != 0 {
		t.Fatalf("1 left: wait %v", w)
	}
	if w := reserve(t, l, lower, 0); w == 0 {
		t.Fatal("none left after an answer saying 1: no wait, want the reset")
	}
	time.Sleep(time.Until(start.Add(310 * time.Millisecond)))
	for i := range 6 { // the window's limit, 6
		if w := reserve(t, l, lower, 0); w != 0 {
			t.Fatalf("after the reset, call %d of the limit's 6: wait %v", i, w)
		}
	}
	if w := reserve(t, l, lower, 0); w == 0 {
		t.Error("a seventh call after the reset, no answer of the new window yet: no wait, want one")
	}
}

// Tokens are counted against the tokens' limit, requests against theirs.
func TestTheFleetsCountOfTokens(t *testing.T) {
	c := client(t)
	l := newLimiter(t, c, uniqueKey(t), 100, 10)
	seen := saidAt(time.Now(), 100, 200, time.Minute)
	seen.Tokens = llmhttp.Limit{Known: true, Limit: 1000, Remaining: 500, Reset: seen.At.Add(30 * time.Second)}
	if w := reserve(t, l, seen, 400); w != 0 {
		t.Fatalf("400 tokens of 500: wait %v", w)
	}
	if w := reserve(t, l, seen, 200); w < 29*time.Second || w > 30*time.Second {
		t.Errorf("200 tokens of the 100 left: wait %v, want the tokens' reset, 30s", w)
	}
	if w := reserve(t, l, seen, 100); w != 0 {
		t.Errorf("100 tokens of the 100 left: wait %v, want none", w)
	}
}

// Without Redis, ReserveHeaders fails at once, bounded by the timeout, and
// the ratelimit decorator paces by this process's own count.
func TestTheFleetsCountWithoutRedis(t *testing.T) {
	l := newLimiter(t, unreachable(t), uniqueKey(t), 100, 10, fleet.WithTimeout(50*time.Millisecond))
	start := time.Now()
	_, err := l.ReserveHeaders(t.Context(), saidAt(time.Now(), 3, 10, time.Minute), 0)
	if err == nil || time.Since(start) > time.Second {
		t.Errorf("ReserveHeaders without Redis = %v after %v, want an error within the timeout", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := newLimiter(t, unreachable(t), uniqueKey(t), 100, 10).ReserveHeaders(ctx, saidAt(time.Now(), 3, 10, time.Minute), 0); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled caller: %v, want context.Canceled", err)
	}
}

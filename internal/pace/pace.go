// Package pace paces calls by what a provider's rate-limit headers say
// of its limits (llmhttp.RateLimits), so that they slow down before it
// answers 429. The ratelimit and pool packages pace by it; the fleet
// module runs the same algorithm in Redis, and both pass the vectors of
// testdata/.
package pace

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// Pace paces calls by what a provider's headers say of its limits,
// so that they slow down before it answers 429: when the last response
// said k requests (or tokens) are left until a reset, the calls sent
// after it take from those k, and the ones that find none left wait for
// the reset. A response that says more starts the count again. It is
// safe for concurrent use.
type Pace struct {
	src llmhttp.RateLimited

	mu     sync.Mutex
	last   llmhttp.RateLimits // what the response the counts are taken from said
	sent   int64              // requests sent since it, before its reset
	tokens int64              // tokens sent since it, before its reset
	// after and afterTokens count what was sent since its reset, when the
	// window is full again: until a response of the new window says more,
	// the calls after the reset take from its whole limit, not all go at
	// once.
	after, afterTokens int64
}

// New returns a Pace over src's limits.
func New(src llmhttp.RateLimited) *Pace { return &Pace{src: src} }

// Reserve counts one call of cost tokens (0 when the caller does not
// count tokens) at now, and returns how long it must wait for the
// provider's reset: 0 when the provider's limits leave room for it, or
// say nothing.
func (p *Pace) Reserve(now time.Time, tokens int) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	wait := p.wait(now, tokens)
	if wait == 0 {
		if r := p.last.Requests; r.Known && !r.Reset.After(now) && !r.Reset.IsZero() {
			p.after++
			p.afterTokens += int64(tokens)
		} else {
			p.sent++
			p.tokens += int64(tokens)
		}
	}
	return wait
}

// Wait returns how long a call of cost tokens at now would wait, counting
// nothing.
func (p *Pace) Wait(now time.Time, tokens int) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.wait(now, tokens)
}

// wait runs under p.mu.
func (p *Pace) wait(now time.Time, tokens int) time.Duration {
	r, ok := p.src.RateLimits()
	if !ok {
		return 0
	}
	if r != p.last && p.fresher(r) { // a newer response (two may come at one instant)
		// Calls sent before it may not have reached the provider when it
		// answered: those it does not count yet are carried over.
		p.sent = uncounted(p.last.Requests, r.Requests, r.At, p.sent, p.after)
		p.tokens = uncounted(p.last.Tokens, r.Tokens, r.At, p.tokens, p.afterTokens)
		p.last, p.after, p.afterTokens = r, 0, 0
	}
	r = p.last
	return max(limitWait(r.Requests, r.At, now, p.sent, p.after, 1), limitWait(r.Tokens, r.At, now, p.tokens, p.afterTokens, int64(tokens)))
}

// fresher reports whether r, the limits of the response received last,
// tells more than the counts kept since p.last: a response says what was
// left when the provider answered, and answers come back out of order (a
// slow answer's headers are as old as its request; a 429 comes at once),
// so one that says more is left in the same window than p.last less what
// was sent since, plus what the limit may have refilled since, is stale,
// and taking it would send more than is left. A response received after
// p.last's reset is of a new window.
func (p *Pace) fresher(r llmhttp.RateLimits) bool {
	type count struct {
		old, new llmhttp.Limit
		sent     int64
	}
	for _, c := range [2]count{{p.last.Requests, r.Requests, p.sent}, {p.last.Tokens, r.Tokens, p.tokens}} {
		if !c.old.Known || !c.new.Known {
			continue
		}
		if c.old.Reset.IsZero() || !r.At.Before(c.old.Reset) || c.old.Limit <= 0 || !c.old.Reset.After(p.last.At) {
			return true // a new window, or no limit to tell a refill from a stale answer by
		}
		// A limit that refills as it goes (OpenAI's) may have refilled
		// since, at the rate that fills it by its reset.
		rate := float64(c.old.Limit-c.old.Remaining) / c.old.Reset.Sub(p.last.At).Seconds()
		refilled := int64(math.Ceil(rate * r.At.Sub(p.last.At).Seconds()))
		return c.new.Remaining <= c.old.Remaining-c.sent+refilled
	}
	return true
}

// uncounted is how much of what was sent since the response that said old
// (sent before its reset, after since it) the response received at at
// that says l does not count yet: what was sent, less what l says was
// used since old (in the same window) or since the reset (in a new one).
// Others' use of the limit shows as ours, so it errs toward sending more.
func uncounted(old, l llmhttp.Limit, at time.Time, sent, after int64) int64 {
	switch {
	case !l.Known:
		return 0
	case old.Known && !old.Reset.IsZero() && !at.Before(old.Reset):
		if l.Limit <= 0 {
			return 0
		}
		return max(after-(l.Limit-l.Remaining), 0)
	case old.Known && l.Remaining < old.Remaining:
		return max(sent-(old.Remaining-l.Remaining), 0)
	}
	return 0 // more is left than old said: refilled since, taken to count all
}

// limitWait is how long a call of cost at now waits for room in l, said
// by a response received at at: before l's reset, l.Remaining less sent
// is left; after it, the window's whole l.Limit less after (what was sent
// since the reset), until a response of the new window says more. With
// no room left before the reset, the call waits for it; after it, for as
// long again as the response said the window had left, the best guess of
// when the new window's room comes back. Unknown limits, and a cost of 0,
// never wait.
func limitWait(l llmhttp.Limit, at, now time.Time, sent, after, cost int64) time.Duration {
	if !l.Known || cost <= 0 || l.Reset.IsZero() {
		return 0
	}
	if l.Reset.After(now) {
		if l.Remaining-sent < cost {
			return l.Reset.Sub(now)
		}
		return 0
	}
	if l.Limit > 0 && l.Limit-after < cost {
		return max(l.Reset.Sub(at), minAfterReset)
	}
	return 0
}

// minAfterReset is the least a call waits for a new window's room once
// the calls after a reset have taken its whole limit.
const minAfterReset = 10 * time.Millisecond

// A Shared counts calls against what a provider's rate-limit headers say,
// for every process that shares it: the fleet module's Limiter is one.
// When a ratelimit Runnable's Backend is one, its calls are paced by the
// headers of the whole fleet's answers, counted by the whole fleet, rather
// than by this process's own alone; while it fails (Redis away), by this
// process's own.
type Shared interface {
	// ReserveHeaders takes limits, what the last answer this process
	// received said of the provider's requests and tokens, into the
	// shared count, and counts one call of tokens against it (0 when
	// calls are not counted in tokens). It returns 0 when the call has
	// room and is counted, or the wait for the limits' reset when it has
	// none, counting nothing.
	ReserveHeaders(ctx context.Context, limits llmhttp.RateLimits, tokens int) (time.Duration, error)
}

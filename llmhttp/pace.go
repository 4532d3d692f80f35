package llmhttp

import (
	"sync"
	"time"
)

// HeaderPace paces calls by what a provider's headers say of its limits,
// so that they slow down before it answers 429: when the last response
// said k requests (or tokens) are left until a reset, the calls sent
// after it take from those k, and the ones that find none left wait for
// the reset. A response that says more starts the count again. It is
// safe for concurrent use.
type HeaderPace struct {
	src RateLimited

	mu     sync.Mutex
	last   RateLimits // what the response the counts are taken from said
	sent   int64      // requests sent since it
	tokens int64      // tokens sent since it
}

// NewHeaderPace returns a HeaderPace over src's limits.
func NewHeaderPace(src RateLimited) *HeaderPace { return &HeaderPace{src: src} }

// Reserve counts one call of cost tokens (0 when the caller does not
// count tokens) at now, and returns how long it must wait for the
// provider's reset: 0 when the provider's limits leave room for it, or
// say nothing.
func (p *HeaderPace) Reserve(now time.Time, tokens int) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	wait := p.wait(now, tokens)
	if wait == 0 {
		p.sent++
		p.tokens += int64(tokens)
	}
	return wait
}

// Wait returns how long a call of cost tokens at now would wait, counting
// nothing.
func (p *HeaderPace) Wait(now time.Time, tokens int) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.wait(now, tokens)
}

// wait runs under p.mu.
func (p *HeaderPace) wait(now time.Time, tokens int) time.Duration {
	r, ok := p.src.RateLimits()
	if !ok {
		return 0
	}
	if r != p.last { // a newer response (two may come at one instant)
		p.last, p.sent, p.tokens = r, 0, 0
	}
	var wait time.Duration
	if l := r.Requests; l.Known && l.Reset.After(now) && l.Remaining-p.sent <= 0 {
		wait = l.Reset.Sub(now)
	}
	if l := r.Tokens; tokens > 0 && l.Known && l.Reset.After(now) && l.Remaining-p.tokens < int64(tokens) {
		wait = max(wait, l.Reset.Sub(now))
	}
	return wait
}

// Package pace paces calls by what a provider's rate-limit headers say of
// its limits (llmhttp.RateLimits), so that they slow down before it
// answers 429. The ratelimit and pool packages pace by it; the fleet
// module runs the same algorithm as a Redis script. The algorithm is
// specified once, by the vectors of llmhttp/testdata/pace, which both
// pass.
//
// Each limit (requests, tokens) is counted on its own, from the last
// answer it took:
//
//   - An answer is taken when it was received after the one held and
//     either is of a new window (received once the held one's reset has
//     passed, or saying its window resets later than the held one's does
//     by more than a clock's noise: a window that starts at its first
//     call began while ours was thought to run), or says no more is left
//     than the count kept since the held one, plus what a limit that
//     refills as it goes may have refilled since. Any other answer is
//     stale: its headers are older than the count (answers come back out
//     of order), and it changes nothing.
//   - The calls sent before a taken answer that it does not count yet are
//     on their way, and carried over: what was sent, less what it says
//     was used since the held answer (in the same window) or of its own
//     window (in a new one); all of it when it says as much is left as
//     the held one. Others' use of the key shows as ours: the count errs
//     toward sending more only as far as the answers say.
//   - Before the held answer's reset, a call of cost c has room when its
//     remaining less what was sent since leaves c. After the reset, the
//     window is full again: the calls take from its whole limit, until an
//     answer of the new window says more; one that finds none waits for
//     as long again as the held answer said its window had left, at
//     least minAfterReset.
//
// A call is counted when it goes (it has room in every limit), against
// each limit by that limit's own reset.
package pace

import (
	"math"
	"sync"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
)

// Source is a Runnable that reads its provider's rate limits from the
// headers of its responses: the providers' adapters do, by embedding an
// llmhttp.RateLimitTracker. RateLimits returns what the last response that
// said anything of them said, and whether one did.
type Source interface {
	RateLimits() (llmhttp.RateLimits, bool)
}

// Pace paces the calls to one provider by what its last answers said of
// its limits. It is safe for concurrent use.
type Pace struct {
	src Source

	mu               sync.Mutex
	requests, tokens count
}

// New returns a Pace over src's limits.
func New(src Source) *Pace { return &Pace{src: src} }

// Reserve counts one call of cost tokens (0 when the caller does not count
// tokens) at now when the provider's limits leave room for it, or say
// nothing: the call may go now. Otherwise it counts nothing, and the
// reservation is not OK, its Delay the wait for the provider's reset.
func (p *Pace) Reserve(now time.Time, tokens int) core.Reservation {
	p.mu.Lock()
	defer p.mu.Unlock()
	wait := p.wait(now, tokens)
	if wait > 0 {
		return core.Reservation{Delay: wait}
	}
	p.requests.add(now, 1)
	p.tokens.add(now, int64(tokens))
	return core.Reservation{OK: true}
}

// Wait returns how long a call of cost tokens at now would wait, counting
// nothing.
func (p *Pace) Wait(now time.Time, tokens int) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.wait(now, tokens)
}

// wait takes the source's last answer and returns the call's wait; it
// runs under p.mu.
func (p *Pace) wait(now time.Time, tokens int) time.Duration {
	if r, ok := p.src.RateLimits(); ok {
		p.requests.take(r.Requests, r.At)
		p.tokens.take(r.Tokens, r.At)
	}
	return max(p.requests.wait(now, 1), p.tokens.wait(now, int64(tokens)))
}

// count is one limit's count: the answer it is taken from, and what was
// sent since.
type count struct {
	held  llmhttp.Limit // Known false until an answer with a reset is taken
	at    time.Time     // when held was received
	sent  int64         // sent since held, before its reset
	after int64         // sent since held's reset
}

// take considers l, said by an answer received at at.
func (c *count) take(l llmhttp.Limit, at time.Time) {
	if !l.Known || l.Reset.IsZero() {
		return
	}
	if c.held.Known && !at.After(c.at) {
		return // the answer held, or one older
	}
	var carry int64
	switch {
	case !c.held.Known || !at.Before(c.held.Reset): // the first answer, or one received after the held reset
		carry = max(c.after-used(l, c.after), 0)
	default:
		if l.Remaining > c.held.Remaining-c.sent+refilled(c.held, c.at, at) {
			return // stale
		}
		carry = min(max(c.sent-(c.held.Remaining-l.Remaining), 0), c.sent)
	}
	*c = count{held: l, at: at, sent: carry}
}

// used is how much of its window l says was used: all of sent, the
// calls it may count, when its limit is unknown.
func used(l llmhttp.Limit, sent int64) int64 {
	if l.Limit <= 0 {
		return sent
	}
	return l.Limit - l.Remaining
}

// refilled is how many whole units a limit that refills as it goes
// (OpenAI's) may have refilled between the held answer, received at from,
// and one received at to, at the rate that fills it by its reset: none
// before a whole unit could have, so that an answer older than the count
// (a fixed window's, which never refills) is never taken for a refill. A
// limit not known refills nothing.
func refilled(held llmhttp.Limit, from, to time.Time) int64 {
	span := held.Reset.Sub(from)
	if held.Limit <= 0 || span <= 0 {
		return 0
	}
	// As the fleet's script does it, in one order: the same vectors pass.
	return int64(math.Floor(float64(held.Limit-held.Remaining) * float64(to.Sub(from)) / float64(span)))
}

// wait is how long a call of cost at now waits for room.
func (c *count) wait(now time.Time, cost int64) time.Duration {
	l := c.held
	switch {
	case !l.Known || cost <= 0:
		return 0
	case l.Reset.After(now):
		if l.Remaining-c.sent < cost {
			return l.Reset.Sub(now)
		}
	case l.Limit > 0 && l.Limit-c.after < cost:
		return max(l.Reset.Sub(c.at), minAfterReset)
	}
	return 0
}

// add counts a call of cost that goes at now: before the first answer,
// or after the held one's reset, as sent into a window no answer has
// counted yet.
func (c *count) add(now time.Time, cost int64) {
	if c.held.Known && c.held.Reset.After(now) {
		c.sent += cost
	} else {
		c.after += cost
	}
}

const (
	// minAfterReset is the least a call waits for a new window's room
	// once the calls after a reset have taken its whole limit.
	minAfterReset = 10 * time.Millisecond
)

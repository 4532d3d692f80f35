package budget

import (
	"time"

	"github.com/steadfast-go/steadfast/core"
)

// burstSpan is how much of its rate the retries' bucket holds, so that a
// herd of failures gets its retries spread over time; minRate keeps every
// wait finite.
const (
	burstSpan = 10 * time.Millisecond
	minRate   = 1e-3
)

// Pacer is the retries' token bucket of the law, for a budget that keeps
// its counts elsewhere (the fleet module's Budget paces each process's
// retries at its part of the whole fleet's rate). It is not safe for
// concurrent use: its owner serializes the calls, Cancel's included.
type Pacer struct {
	maxWait time.Duration
	tokens  float64   // may go negative: turns promised ahead
	last    time.Time // when tokens were last refilled
}

// NewPacer returns a Pacer with s's MaxWait, full, after checking s as
// NewAdaptive does.
func NewPacer(s Setting) (*Pacer, error) {
	if err := s.check("NewPacer"); err != nil {
		return nil, err
	}
	return &Pacer{maxWait: s.MaxWait, tokens: 1, last: time.Now()}, nil
}

// Reserve adds the tokens earned at rate since its last call and takes one
// for a retry: the wait until it is due, or a refusal, taking nothing, when
// that would pass maxWait or the setting's MaxWait. Cancel gives it back.
func (p *Pacer) Reserve(now time.Time, rate float64, maxWait time.Duration) core.Reservation {
	rate = max(rate, minRate)
	p.tokens = min(p.tokens+rate*now.Sub(p.last).Seconds(), max(rate*burstSpan.Seconds(), 1))
	p.last = now
	var wait time.Duration
	if p.tokens < 1 {
		wait = time.Duration((1 - p.tokens) / rate * float64(time.Second))
	}
	if wait > min(maxWait, p.maxWait) {
		return core.Reservation{}
	}
	p.tokens--
	return core.Reservation{Delay: wait, OK: true, Cancel: func() { p.tokens++ }}
}

package retry

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// AdaptiveBudget paces retries by what they achieve. Retries are drawn from
// a token bucket whose rate follows the recent rate of first attempts:
// Ratio of it while retries succeed, falling with the share of recent
// retries that succeeded, down to MinPerSecond when none does. Retries
// that work (an overload with lulls: the retry lands in the lull) keep
// their rate; retries that fail (an outage, a provider that collapsed
// under load) fall to a trickle at once, whatever the traffic, and stay
// there for as long as the outage lasts. A retry waits for its token up to
// MaxWait, else is refused; the retry layer waits the longer of that and
// its backoff.
//
// Recording an attempt costs one or two atomic adds; the rate is worked
// out when a retry asks, over the last second. It is safe for concurrent
// use; share one among the RetryRunnables that call one provider.
type AdaptiveBudget struct {
	firsts, retries, retryOK atomic.Int64 // attempts recorded, in all

	mu    sync.Mutex
	pace  *Pacing
	snaps [adaptiveSnaps]counts
	next  int // the oldest snapshot, replaced next
}

// The window over which AdaptiveBudget measures: a snapshot of the counts
// every tenth of it.
const (
	adaptiveWindow = time.Second
	adaptiveSnaps  = 10
	// adaptiveQuorum is how many retries in the window make their success
	// share count on their own; with fewer, the missing ones are taken to
	// fare as retries last did (see Pacing.share).
	adaptiveQuorum = 10
	// minRate keeps the rate above zero, so that every wait is finite.
	minRate = 1e-3
)

type counts struct {
	at                       time.Time
	firsts, retries, retryOK int64
}

// NewAdaptiveBudget returns an AdaptiveBudget. ratio, in (0, 1], is the
// most retries per first attempt, reached while retries succeed: 0.2 means
// at most 20 % more load than no retrying. minPerSecond, at least 0, is
// the rate left when no retry succeeds (and the rate of a client too quiet
// to measure). maxWait, positive, is the longest a retry waits for its
// token. It reports an error naming the first bad argument.
func NewAdaptiveBudget(ratio, minPerSecond float64, maxWait time.Duration) (*AdaptiveBudget, error) {
	p, err := newPacing("NewAdaptiveBudget", ratio, minPerSecond, maxWait)
	if err != nil {
		return nil, err
	}
	b := &AdaptiveBudget{pace: p}
	for i := range b.snaps {
		b.snaps[i].at = p.last
	}
	return b, nil
}

// RecordAttempt counts attempt n's result: first attempts set the pace,
// retries' successes scale it.
func (b *AdaptiveBudget) RecordAttempt(_ context.Context, n int, success bool) {
	if n <= 1 {
		b.firsts.Add(1)
		return
	}
	b.retries.Add(1)
	if success {
		b.retryOK.Add(1)
	}
}

// ReserveRetry takes a retry's token: the wait until it is due, or false
// when that would be longer than maxWait or the budget's own.
func (b *AdaptiveBudget) ReserveRetry(_ context.Context, maxWait time.Duration) (time.Duration, bool) {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pace.Reserve(now, b.rate(now), maxWait)
}

// Rate returns the retries a second the budget allows now.
func (b *AdaptiveBudget) Rate() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(b.rate(time.Now()), minRate)
}

// rate takes a snapshot when one is due and works out the rate over the
// window. It runs under b.mu.
func (b *AdaptiveBudget) rate(now time.Time) float64 {
	cur := counts{at: now, firsts: b.firsts.Load(), retries: b.retries.Load(), retryOK: b.retryOK.Load()}
	newest := b.snaps[(b.next+adaptiveSnaps-1)%adaptiveSnaps]
	if now.Sub(newest.at) >= adaptiveWindow/adaptiveSnaps {
		b.snaps[b.next] = cur
		b.next = (b.next + 1) % adaptiveSnaps
	}
	// The window starts at the newest snapshot at least a window old, or
	// the oldest there is; it spans a window at the least, so a quiet or
	// young budget does not read a few attempts as a high rate.
	oldest := b.snaps[b.next]
	for i := range adaptiveSnaps {
		if s := b.snaps[(b.next+i)%adaptiveSnaps]; now.Sub(s.at) >= adaptiveWindow {
			oldest = s
		}
	}
	span := max(now.Sub(oldest.at), adaptiveWindow)
	return b.pace.Rate(cur.firsts-oldest.firsts, cur.retries-oldest.retries, cur.retryOK-oldest.retryOK, span)
}

// Pacing is the arithmetic of AdaptiveBudget, for a Budget that counts the
// attempts elsewhere (the fleet module's counts a whole fleet's, in
// Redis): the rate at which retries may go, from the attempts of a window,
// and the token bucket that paces them at that rate. It is not safe for
// concurrent use: its owner serializes the calls.
type Pacing struct {
	ratio, minRate float64
	maxWait        time.Duration
	tokens         float64   // may go negative: retries reserved ahead
	last           time.Time // when tokens were last refilled
	lastShare      float64   // the success share of the last window with a quorum of retries
}

// NewPacing returns a Pacing with NewAdaptiveBudget's setting, which it
// checks as NewAdaptiveBudget does.
func NewPacing(ratio, minPerSecond float64, maxWait time.Duration) (*Pacing, error) {
	return newPacing("NewPacing", ratio, minPerSecond, maxWait)
}

func newPacing(fn string, ratio, minPerSecond float64, maxWait time.Duration) (*Pacing, error) {
	switch {
	case !(ratio > 0 && ratio <= 1):
		return nil, fmt.Errorf("retry: %s: ratio is %v, must be in (0, 1]", fn, ratio)
	case !(minPerSecond >= 0) || math.IsInf(minPerSecond, 0):
		return nil, fmt.Errorf("retry: %s: minPerSecond is %v, must be finite and at least 0", fn, minPerSecond)
	case maxWait <= 0:
		return nil, fmt.Errorf("retry: %s: maxWait is %v, must be positive", fn, maxWait)
	}
	return &Pacing{ratio: ratio, minRate: minPerSecond, maxWait: maxWait, tokens: 1, last: time.Now(), lastShare: 1}, nil
}

// Rate returns the retries a second allowed after a window of span in which
// firsts first attempts and retries retries were made, ok of which
// succeeded: ratio × the rate of first attempts × the retries' success
// share, at least minPerSecond.
func (p *Pacing) Rate(firsts, retries, ok int64, span time.Duration) float64 {
	return max(p.minRate, p.ratio*p.share(retries, ok)*float64(firsts)/span.Seconds())
}

// share is the success share of n retries of which ok succeeded. Fewer
// than a quorum are made up to one with retries that fare as they did in
// the last window that had a quorum (presumed all successes at first),
// which a quorum updates. A long outage thus stays at the floor once its
// failures have left the window, instead of being presumed over, and each
// second letting a burst of retries through; and when the provider is
// back, each retry that succeeds raises the pace until a quorum speaks for
// itself.
func (p *Pacing) share(n, ok int64) float64 {
	if n >= adaptiveQuorum {
		p.lastShare = float64(ok) / float64(n)
		return p.lastShare
	}
	return (float64(ok) + float64(adaptiveQuorum-n)*p.lastShare) / adaptiveQuorum
}

// Reserve adds the tokens earned at rate since its last call (the bucket
// holds at most a tenth of a second of them) and takes one: the wait until
// it is due, or false, taking nothing, when that would be longer than
// maxWait or the setting's.
func (p *Pacing) Reserve(now time.Time, rate float64, maxWait time.Duration) (time.Duration, bool) {
	rate = max(rate, minRate)
	burst := max(rate*(adaptiveWindow/adaptiveSnaps).Seconds(), 1)
	p.tokens = min(p.tokens+rate*now.Sub(p.last).Seconds(), burst)
	p.last = now
	if p.tokens >= 1 {
		p.tokens--
		return 0, true
	}
	wait := time.Duration((1 - p.tokens) / rate * float64(time.Second))
	if wait > min(maxWait, p.maxWait) {
		return 0, false
	}
	p.tokens--
	return wait, true
}

// RecommendedBudget returns a new AdaptiveBudget with the recommended
// setting, NewAdaptiveBudget(0.5, 1, time.Second): up to half more load
// than no retrying while retries succeed, one retry a second when none
// does, waits of at most a second. bench/ shows it, under both open-loop
// and closed-loop load, succeeding as often as the other Go retry
// libraries (or more) in an overload with lulls, making about as many
// attempts as no retrying during a total outage, and letting a collapsed
// provider recover as soon as without retries; the cost is a longer tail,
// as paced retries wait their turn. Each call returns a new budget: share
// the one value among the RetryRunnables that call one provider.
func RecommendedBudget() Budget {
	b, err := NewAdaptiveBudget(0.5, 1, time.Second)
	if err != nil {
		panic(err) // constants
	}
	return b
}

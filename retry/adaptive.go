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
// there for as long as the outage lasts. A retry
// waits for its token up to MaxWait, else is refused; the retry layer
// waits the longer of that and its backoff.
//
// It is a Pacer and an AttemptRecorder. Recording an attempt costs one or
// two atomic adds; the rate is worked out when a retry asks, over the last
// second. It is safe for concurrent use; share one among the RetryRunnables
// that call one provider.
type AdaptiveBudget struct {
	ratio, minRate float64
	maxWait        time.Duration

	firsts, retries, retryOK atomic.Int64 // attempts recorded, in all

	mu        sync.Mutex
	tokens    float64   // may go negative: retries reserved ahead
	last      time.Time // when tokens were last refilled
	lastShare float64   // the success share of the last window with a quorum of retries
	snaps     [adaptiveSnaps]counts
	next      int // the oldest snapshot, replaced next
}

// The window over which AdaptiveBudget measures: a snapshot of the counts
// every tenth of it.
const (
	adaptiveWindow = time.Second
	adaptiveSnaps  = 10
	// adaptiveQuorum is how many retries in the window make their success
	// share count on their own; with fewer, the missing ones are taken to
	// fare as retries last did (see shareOf).
	adaptiveQuorum = 10
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
	switch {
	case !(ratio > 0 && ratio <= 1):
		return nil, fmt.Errorf("retry: NewAdaptiveBudget: ratio is %v, must be in (0, 1]", ratio)
	case !(minPerSecond >= 0) || math.IsInf(minPerSecond, 0):
		return nil, fmt.Errorf("retry: NewAdaptiveBudget: minPerSecond is %v, must be finite and at least 0", minPerSecond)
	case maxWait <= 0:
		return nil, fmt.Errorf("retry: NewAdaptiveBudget: maxWait is %v, must be positive", maxWait)
	}
	now := time.Now()
	b := &AdaptiveBudget{ratio: ratio, minRate: minPerSecond, maxWait: maxWait, last: now, tokens: 1, lastShare: 1}
	for i := range b.snaps {
		b.snaps[i].at = now
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

// Record counts a first attempt (for callers that do not number them).
func (b *AdaptiveBudget) Record(ctx context.Context, _ bool) { b.RecordAttempt(ctx, 1, true) }

// AllowRetry reports whether a retry may be made now, with no wait.
func (b *AdaptiveBudget) AllowRetry(ctx context.Context) bool {
	return b.reserve(time.Now(), 0)
}

// ReserveRetry takes a retry's token: the wait until it is due, or false
// when that would be longer than maxWait.
func (b *AdaptiveBudget) ReserveRetry(context.Context) (time.Duration, bool) {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	rate := b.refill(now)
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	wait := time.Duration((1 - b.tokens) / rate * float64(time.Second))
	if wait > b.maxWait {
		return 0, false
	}
	b.tokens--
	return wait, true
}

// reserve takes a token that is due within wait.
func (b *AdaptiveBudget) reserve(now time.Time, wait time.Duration) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	rate := b.refill(now)
	if b.tokens >= 1 || (1-b.tokens)/rate*float64(time.Second) <= float64(wait) {
		b.tokens--
		return true
	}
	return false
}

// Rate returns the retries a second the budget allows now.
func (b *AdaptiveBudget) Rate() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refill(time.Now())
}

// refill takes a snapshot when one is due, works out the rate over the
// window, and adds the tokens earned since the last refill; the bucket
// holds at most a tenth of a second of them. It runs under b.mu.
func (b *AdaptiveBudget) refill(now time.Time) float64 {
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
	span := max(now.Sub(oldest.at), adaptiveWindow).Seconds()
	share := shareOf(cur.retries-oldest.retries, cur.retryOK-oldest.retryOK, &b.lastShare)
	rate := max(b.minRate, b.ratio*share*float64(cur.firsts-oldest.firsts)/span, 1e-3)
	burst := max(rate*(adaptiveWindow/adaptiveSnaps).Seconds(), 1)
	b.tokens = min(b.tokens+rate*now.Sub(b.last).Seconds(), burst)
	b.last = now
	return rate
}

// shareOf is the success share of n retries of which ok succeeded. Fewer
// than a quorum are made up to one with retries that fare as they did in
// the last window that had a quorum (*last, presumed 1 at first), which a
// quorum updates. A long outage thus stays at the floor once its failures
// have left the window, instead of being presumed over, and each second
// letting a burst of retries through; and when the provider is back, each
// retry that succeeds raises the pace until a quorum speaks for itself.
func shareOf(n, ok int64, last *float64) float64 {
	if n >= adaptiveQuorum {
		*last = float64(ok) / float64(n)
		return *last
	}
	return (float64(ok) + float64(adaptiveQuorum-n)**last) / adaptiveQuorum
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

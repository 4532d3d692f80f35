package retry

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/steadfast-go/steadfast/budget"
	"github.com/steadfast-go/steadfast/core"
)

// Budget paces and refuses retries, from the recent results of the
// attempts of every RetryRunnable that shares it. It protects a provider
// from retry storms: when most attempts fail, retries stop and only first
// attempts reach the provider.
//
// Implementations must be safe for concurrent use. The context lets a
// networked implementation (shared across processes) bound its calls.
type Budget interface {
	// ReserveRetry takes one retry's turn: its Delay, at most maxWait, is
	// the wait before the retry may be made (0 for now); a reservation
	// not OK refuses it, taking nothing; its Cancel, if any, gives the
	// turn back, which the retry layer calls when the retry is not made
	// after all (the caller gave up during the wait, or the call ended on
	// its deadline or was handed off). The retry layer passes half of what
	// the caller's deadline leaves (no bound without one), so that the
	// retry and any after it keep the other half, as a held first attempt
	// does; it waits the longer of its backoff and that wait, reported as
	// retry.backoff.source "budget", and ends the call when the wait would
	// pass the deadline. A budget that would hold the retry longer than
	// maxWait decides instead whether it goes within maxWait or not at all
	// (RecommendedBudget does, by what recent retries achieved). A hedge
	// asks with a maxWait of 0.
	ReserveRetry(ctx context.Context, maxWait time.Duration) core.Reservation
	// RecordAttempt reports how attempt n of a call (1 for its first)
	// ended: a success, or a retryable failure. Failures that are not
	// retried, cancellations and rejected outputs are not reported.
	RecordAttempt(ctx context.Context, n int, success bool)
}

// milli is the fixed-point scale of TokenBudget's tokens.
const milli = 1000

// TokenBudget is the Budget of gRPC's retry throttling: it holds up to
// maxTokens tokens, starting full; each failed attempt costs one token, each
// success refunds tokenRatio, and retries are refused while the tokens are
// at or below half of maxTokens. It is lock-free and safe for concurrent use.
type TokenBudget struct {
	max, ratio, threshold int64 // in thousandths of a token
	tokens                atomic.Int64
}

// NewTokenBudget returns a TokenBudget, gRPC's retry throttling. It counts
// failures only, so it cannot tell retries that help from retries that
// harm: RecommendedBudget, which paces retries by what they achieve, is the
// recommended budget; NewTokenBudget(300, 2) is the token budget's best
// setting in bench/.
//
// maxTokens must be positive and tokenRatio non-negative, both finite, and
// neither may round to nothing at the budget's resolution of a thousandth
// of a token (a maxTokens of 0.0005 would never allow a retry, a
// tokenRatio of 0.0005 never refund). NewTokenBudget panics otherwise, as a
// budget is built once at start-up from constants.
func NewTokenBudget(maxTokens, tokenRatio float64) *TokenBudget {
	b, err := newTokenBudget(maxTokens, tokenRatio)
	if err != nil {
		panic(err)
	}
	return b
}

func newTokenBudget(maxTokens, tokenRatio float64) (*TokenBudget, error) {
	switch {
	case math.IsNaN(maxTokens) || math.IsInf(maxTokens, 0) || maxTokens < 1.0/milli || maxTokens > 1e12:
		return nil, fmt.Errorf("retry: NewTokenBudget: maxTokens is %v, must be in [0.001, 1e12]", maxTokens)
	case math.IsNaN(tokenRatio) || math.IsInf(tokenRatio, 0) || tokenRatio < 0 || tokenRatio > 1e12:
		return nil, fmt.Errorf("retry: NewTokenBudget: tokenRatio is %v, must be in [0, 1e12]", tokenRatio)
	case tokenRatio > 0 && tokenRatio < 1.0/milli:
		return nil, fmt.Errorf("retry: NewTokenBudget: tokenRatio is %v, must be 0 or at least 0.001", tokenRatio)
	}
	b := &TokenBudget{
		max:   int64(maxTokens * milli),
		ratio: int64(tokenRatio * milli),
	}
	b.threshold = b.max / 2
	b.tokens.Store(b.max)
	return b, nil
}

// ReserveRetry allows a retry at once while the tokens are above half of
// the maximum, and refuses it otherwise: a TokenBudget never paces.
func (b *TokenBudget) ReserveRetry(context.Context, time.Duration) core.Reservation {
	return core.Reservation{OK: b.tokens.Load() > b.threshold}
}

// RecordAttempt takes one token for a failure, or refunds tokenRatio for a
// success, whichever attempt it was.
func (b *TokenBudget) RecordAttempt(_ context.Context, _ int, success bool) {
	for {
		old := b.tokens.Load()
		next := old - milli
		if success {
			next = old + b.ratio
		}
		next = min(max(next, 0), b.max)
		if next == old || b.tokens.CompareAndSwap(old, next) {
			return
		}
	}
}

// Tokens returns the tokens currently held.
func (b *TokenBudget) Tokens() float64 {
	return float64(b.tokens.Load()) / milli
}

// RecommendedBudget returns a new budget with the recommended setting. It
// paces retries by what they achieve, and holds first attempts back while
// most attempts fail: up to half more load than no retrying while retries
// succeed, one retry a second when none does (until retries or first
// attempts succeed again), waits of at most a second, and first attempts
// held back while most attempts fail.
//
// The caller's deadline is part of each decision: a wait for the budget
// never takes more than half of what the deadline leaves. A retry the pace
// would hold longer goes after that half while recent retries have been
// succeeding (at least a fifth of them; its turn is taken as debt, which
// later retries repay); while they fail (an outage, a collapse) and first
// attempts are held back, it waits in that hold for a turn instead, each
// wait at most half of what the deadline leaves, and the call ends
// (budget_exhausted, no attempt made) when none comes in time: a call
// whose first attempt met the outage meets the provider's return, as one
// that came a moment later does. A call with a deadline is not held back
// while recent retries succeed. A call never waits into a certain failure. When first attempts
// stop being held, the calls still held go at the rate the provider last
// answered, not all at once, so that a provider that collapsed is not
// overloaded again as it recovers.
//
// What it trades: without a deadline it wins by queueing, so its tail is
// longer than other libraries' (a held or paced call waits up to a
// second). With a deadline its paced retries spread over the time the
// deadline leaves where theirs bunch at its start: it serves more of its
// calls within the deadline, and each client fewer calls a second, than
// they do, and it retries far less where retries harm. bench/ runs
// it in every storm family (open and closed loop, clients starting
// together or not), on providers four times smaller and larger, and with
// deadlines of 12 and 50 times the service time; its README has the
// figures, those it does not meet included. Each call returns a new
// budget: share the one value among the RetryRunnables that call one
// provider.
func RecommendedBudget() Budget {
	b, err := budget.NewAdaptive(0.5, 1, time.Second)
	if err != nil {
		panic(err) // constants
	}
	return b
}

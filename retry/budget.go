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

// Budget decides how much of its callers' load a client sends to a
// provider: whether a call's first attempt is sent at all, and when, if
// ever, a retry goes. It is told how every attempt it let go was
// answered. Shared by the RetryRunnables that call one provider, it
// protects the provider from retry storms and from a collapse under its
// callers' load.
//
// Implementations must be safe for concurrent use. The context lets a
// networked implementation (shared across processes) bound its calls. A
// budget that also has a method Throttle() float64 (the probability with
// which it refuses first attempts now, as RecommendedBudget's has) is
// reported as the gauge retry.budget.throttle.
type Budget interface {
	// Reserve takes the turn of attempt n of a call (1 for its first). A
	// first attempt's reservation is OK, with no Delay, or not OK: the
	// budget refuses it here, before it is sent (a client-side throttle),
	// and the call ends with no attempt made, outcome budget_exhausted and
	// error.type budget_throttled, a Local() refusal that fallback and
	// pool move on from at once. A retry's Delay, at most maxWait, is the
	// wait before it may be made (0 for now); a reservation not OK refuses
	// it, taking nothing, and ends the call with outcome budget_exhausted
	// (the last attempt's error); its
	// Cancel, if any, gives the turn back, which the retry layer calls
	// when the retry is not made after all (the caller gave up during the
	// wait, or the call ended on its deadline or was handed off). For a
	// retry the retry layer passes half of what the caller's deadline
	// leaves (no bound without one), so that the retry keeps the other
	// half; it waits the longer of its backoff and that wait, reported as
	// retry.backoff.source "budget". A hedge asks for a retry with a
	// maxWait of 0.
	Reserve(ctx context.Context, n int, maxWait time.Duration) core.Reservation
	// RecordAttempt reports the answer to attempt n of a call (1 for its
	// first), which the budget let go: accepted (a success; a failure
	// the provider answered and that is not worth retrying, such as a
	// 400; an output the caller's check rejected) or not (a retryable
	// failure). Attempts that got no answer (the caller cancelled) and
	// refusals made on this side of the wire (a Local() error) are not
	// reported.
	RecordAttempt(ctx context.Context, n int, accepted bool)
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

// Reserve lets every first attempt go; it allows a retry at once while the
// tokens are above half of the maximum, and refuses it otherwise: a
// TokenBudget never paces.
func (b *TokenBudget) Reserve(_ context.Context, n int, _ time.Duration) core.Reservation {
	return core.Reservation{OK: n <= 1 || b.tokens.Load() > b.threshold}
}

// RecordAttempt takes one token for a refused attempt, or refunds
// tokenRatio for an accepted one, whichever attempt it was.
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

// held returns the tokens currently held.
func (b *TokenBudget) held() float64 {
	return float64(b.tokens.Load()) / milli
}

// RecommendedBudget returns a new budget of package budget's law with its
// default setting (budget.DefaultSetting): attempts are refused here with
// probability max(0, (requests − 2·accepts − 8) / (requests + 8)) over
// the last second's answers (client-side adaptive throttling, from the SRE
// book), and retries go at most at half the rate of the first attempts,
// plus one a second (a retry budget, as Finagle's and Envoy's), paced by
// a token bucket so that a herd's retries are spread, each waiting for its
// turn at most a second and at most half of what its caller's deadline
// leaves. While the provider answers most requests nothing is throttled;
// when it collapses, the client sends it a fraction of its callers' load,
// so that it recovers.
//
// bench/ runs it in every storm family (open and closed loop, clients
// starting together or not, a provider that collapses with hysteresis),
// at provider sizes from a quarter to sixteen times the default; its
// README has the figures, those it does not meet included. Each call
// returns a new budget: share the one value among the RetryRunnables that
// call one provider.
func RecommendedBudget() Budget {
	b, err := budget.NewAdaptive(budget.DefaultSetting())
	if err != nil {
		panic(err) // constants
	}
	return b
}

package retry

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// Budget decides whether retries may be made, from the recent results of
// the attempts of every RetryRunnable that shares it. It protects a provider
// from retry storms: when most attempts fail, retries stop and only first
// attempts reach the provider.
//
// Implementations must be safe for concurrent use. The context lets a
// networked implementation (shared across processes) bound its calls.
type Budget interface {
	// AllowRetry reports whether a retry may be made now.
	AllowRetry(ctx context.Context) bool
	// Record reports the result of an attempt: success, or a retryable
	// failure. Non-retryable failures and cancellations are not reported.
	Record(ctx context.Context, success bool)
}

// Pacer is implemented by a Budget that paces retries instead of only
// refusing them. ReserveRetry takes a retry's turn: the wait before the
// retry may be made, or ok false to refuse it. The retry layer calls it
// instead of AllowRetry and waits the longer of its backoff and that wait,
// reported as retry.backoff.source "budget"; a wait that would pass the
// caller's deadline ends the call with outcome deadline.
type Pacer interface {
	Budget
	ReserveRetry(ctx context.Context) (wait time.Duration, ok bool)
}

// AttemptRecorder is implemented by a Budget that learns from how retries
// fare, not only from how many attempts fail. The retry layer calls
// RecordAttempt, with the attempt's number (1 for a first attempt), instead
// of Record.
type AttemptRecorder interface {
	Budget
	RecordAttempt(ctx context.Context, attempt int, success bool)
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
// recommended budget. NewTokenBudget(300, 2) is its best setting in bench/. maxTokens must be positive and
// tokenRatio non-negative, both finite, and neither may round to nothing at
// the budget's resolution of a thousandth of a token (a maxTokens of
// 0.0005 would never allow a retry, a tokenRatio of 0.0005 never refund);
// NewTokenBudget panics otherwise, as a budget is built once at start-up
// from constants.
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

// AllowRetry reports whether the tokens are above half of the maximum.
func (b *TokenBudget) AllowRetry(context.Context) bool {
	return b.tokens.Load() > b.threshold
}

// Record takes one token for a failure, or refunds tokenRatio for a success.
func (b *TokenBudget) Record(_ context.Context, success bool) {
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

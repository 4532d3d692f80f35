package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrLimited is matched (errors.Is) by the errors of calls refused a token.
var ErrLimited = errors.New("ratelimit: rate limited")

// LimitedError is the error of a call refused its tokens: in fail-fast mode
// when they are not free now, in waiting mode when the wait would pass the
// context's deadline, and at once, never to pass, when it costs more
// tokens than the bucket holds at once (Cost over Burst). Wait is how long
// the tokens would take.
type LimitedError struct {
	Wait time.Duration
	// Deadline reports that waiting was refused because of the context's
	// deadline. That deadline may be a retry layer's per-attempt timeout
	// rather than the caller's, so the refusal is still retryable after
	// Wait: the retry layer ends the call if its caller's deadline would
	// pass first.
	Deadline bool
	// Cost and Burst, when Burst is set, are the call's cost and the
	// bucket's burst it is over: no wait will ever admit it. Send fewer
	// items per Batch, or raise the burst.
	Cost, Burst int
}

// Error says how long the tokens would take, or that they never will.
func (e *LimitedError) Error() string {
	switch {
	case e.Burst > 0:
		return fmt.Sprintf("ratelimit: a call costing %d tokens can never pass a bucket whose burst is %d", e.Cost, e.Burst)
	case e.Deadline:
		return fmt.Sprintf("ratelimit: a token takes %v, past the context's deadline", e.Wait)
	}
	return fmt.Sprintf("ratelimit: rate limited, next token in %v", e.Wait)
}

// Is makes errors.Is(err, ErrLimited) hold, and errors.Is(err,
// context.DeadlineExceeded) for a deadline refusal.
func (e *LimitedError) Is(target error) bool {
	return target == ErrLimited || (e.Deadline && target == context.DeadlineExceeded)
}

// Retryable reports whether the tokens will come, after Wait: not for a
// call over the burst, which fails the same way every time.
func (e *LimitedError) Retryable() bool { return e.Burst == 0 }

// RetryAfter tells the retry layer to wait exactly until the tokens are due.
func (e *LimitedError) RetryAfter() time.Duration { return e.Wait }

// Local reports true: the call was refused here and never reached the
// provider, so a circuit breaker does not count it.
func (e *LimitedError) Local() bool { return true }

// costError is the error of a call whose WithCost function gave a
// negative cost: a bug in the caller's function, which no retry mends.
type costError struct{ cost int }

func (e *costError) Error() string {
	return fmt.Sprintf("ratelimit: the WithCost function gave a cost of %d, want at least 0", e.cost)
}

func (e *costError) Retryable() bool { return false }

func (e *costError) Local() bool { return true }

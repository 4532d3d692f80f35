package fleet

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/ratelimit"
)

var _ ratelimit.SharedHeaders = (*Limiter)(nil)

// ReserveHeaders implements the header pacing a ratelimit Runnable asks of its Backend: the fleet's calls are
// counted in Redis (under the Limiter's key and ":headers") against what
// the provider's rate-limit headers say, from the answers every replica
// receives, so that the replicas together send no more than the provider
// says is left. It is one more round trip, bounded by WithTimeout; while
// the Limiter decides locally (Redis away), it returns an error, and the
// ratelimit decorator paces by this process's own count.
func (l *Limiter) ReserveHeaders(ctx context.Context, limits llmhttp.RateLimits, tokens int) (core.Reservation, error) {
	if l.h.local() {
		return core.Reservation{}, errDeciding
	}
	args := headerArgs(limits, tokens, time.Now())
	args = append(args, "") // Redis's clock
	rctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	res, err := headers.Run(rctx, l.client, []string{l.key + ":headers"}, args...).Text()
	if err != nil {
		if ctx.Err() != nil { // the caller's end, not Redis's
			l.h.probing.Store(false)
			return core.Reservation{}, ctx.Err()
		}
		l.h.failed(err)
		return core.Reservation{}, err
	}
	ms, err := strconv.ParseFloat(res, 64)
	if err != nil {
		return core.Reservation{}, fmt.Errorf("fleet: the headers script answered %q", res)
	}
	l.h.ok()
	wait := time.Duration(ms * float64(time.Millisecond))
	return core.Reservation{Delay: wait, OK: wait == 0}, nil
}

// errDeciding is ReserveHeaders' answer while the Limiter decides locally.
var errDeciding = errors.New("fleet: Redis is away: the Limiter decides locally")

// headersTTL is how long the fleet's count against the headers outlives
// its last call: a new answer starts it again.
const headersTTL = 10 * time.Minute

// headerArgs is the headers script's arguments but the last: a call of
// tokens at now, with limits the last answer received.
func headerArgs(limits llmhttp.RateLimits, tokens int, now time.Time) []any {
	args := make([]any, 0, 15)
	args = appendLimit(args, limits.Requests, limits.At, now, 1)
	args = appendLimit(args, limits.Tokens, limits.At, now, tokens)
	return append(args, headersTTL.Milliseconds(), limits.At.UnixNano())
}

// appendLimit appends the headers script's six arguments for l, said by
// an answer received at at, and a call of cost.
func appendLimit(args []any, l llmhttp.Limit, at, now time.Time, cost int) []any {
	if !l.Known || l.Reset.IsZero() {
		return append(args, 0, 0, 0, 0, 0, cost)
	}
	return append(args, 1, l.Remaining, l.Limit, ms(l.Reset.Sub(now)), ms(now.Sub(at)), cost)
}

// ms is d in milliseconds, with a fraction.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
}

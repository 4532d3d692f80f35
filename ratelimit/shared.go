package ratelimit

import (
	"context"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
)

// SharedHeaders is a Backend that also counts calls against what a
// provider's rate-limit headers say, for every process that shares it:
// fleet.Limiter is one. When a Runnable's Backend is one, its calls are
// paced by the headers of the whole fleet's answers, counted by the whole
// fleet, rather than by this process's own alone; while ReserveHeaders
// fails (its store away), by this process's own.
type SharedHeaders interface {
	// ReserveHeaders takes limits, what the last answer this process
	// received said of the provider's requests and tokens, into the
	// shared count, and counts one call of tokens against it (0 when
	// calls are not counted in tokens). The call may go now when it has
	// room, and is counted; when it has none, the reservation is not OK,
	// its Delay the wait for the limits' reset, and counts nothing.
	ReserveHeaders(ctx context.Context, limits llmhttp.RateLimits, tokens int) (core.Reservation, error)
}

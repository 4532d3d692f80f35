package retry

import "github.com/steadfast-go/steadfast/internal/callspan"

// methodSpanNames are the names of each method's call span.
var methodSpanNames = [callspan.Methods]string{"retry.invoke", "retry.batch", "retry.stream"}

// backoffSource says where a backoff's delay came from; the zero value
// means no backoff.
type backoffSource uint8

const (
	backoffComputed   backoffSource = iota + 1 // the policy's exponential backoff and jitter
	backoffRetryAfter                          // the server's RetryAfter hint
	backoffBudget                              // the budget's pacing wait, longer than the backoff
)

// String returns the source's retry.backoff.source value, which
// RetryEvent.Source holds: "computed", "retry_after" or "budget"; "" for
// no backoff.
func (s backoffSource) String() string {
	switch s {
	case backoffComputed:
		return "computed"
	case backoffRetryAfter:
		return "retry_after"
	case backoffBudget:
		return "budget"
	}
	return ""
}

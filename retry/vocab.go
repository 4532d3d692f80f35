package retry

import "github.com/steadfast-go/steadfast/internal/callspan"

// methodSpanNames are the names of each method's call span.
var methodSpanNames = [callspan.Methods]string{"retry.invoke", "retry.batch", "retry.stream"}

// BackoffSource says where a backoff's delay came from. Its values are
// those of the retry.backoff.source attribute.
type BackoffSource uint8

// The sources of a backoff's delay; the zero value means no backoff.
const (
	// BackoffComputed is the policy's exponential backoff and jitter.
	BackoffComputed BackoffSource = iota + 1
	// BackoffRetryAfter is the server's RetryAfter hint.
	BackoffRetryAfter
	// BackoffBudget is the budget's pacing wait, longer than the backoff.
	BackoffBudget
)

// String returns the source's retry.backoff.source value: "computed",
// "retry_after" or "budget"; "" for no backoff.
func (s BackoffSource) String() string {
	switch s {
	case BackoffComputed:
		return "computed"
	case BackoffRetryAfter:
		return "retry_after"
	case BackoffBudget:
		return "budget"
	}
	return ""
}

package retry

// method is the RetryRunnable method a call was made through: the closed
// set of values of the retry.method attribute.
type method uint8

const (
	methodInvoke method = iota
	methodBatch
	methodStream
	methodCount // the number of methods
)

var (
	methodNames     = [methodCount]string{"invoke", "batch", "stream"}
	methodSpanNames = [methodCount]string{"retry.invoke", "retry.batch", "retry.stream"}
)

// String returns the method's retry.method value.
func (m method) String() string { return methodNames[m] }

// spanName returns the name of the method's call span.
func (m method) spanName() string { return methodSpanNames[m] }

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

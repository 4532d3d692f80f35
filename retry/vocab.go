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

// backoffSource says where a backoff's delay came from: the closed set of
// values of the retry.backoff.source attribute.
type backoffSource uint8

const (
	sourceNone       backoffSource = iota // no backoff follows
	sourceComputed                        // the policy's exponential backoff and jitter
	sourceRetryAfter                      // the server's RetryAfter hint
	sourceBudget                          // the budget's pacing wait
)

// String returns the source's retry.backoff.source value.
func (s backoffSource) String() string {
	switch s {
	case sourceComputed:
		return "computed"
	case sourceRetryAfter:
		return "retry_after"
	case sourceBudget:
		return "budget"
	}
	return ""
}

// firstResult is what the first receive of a Stream attempt found.
type firstResult uint8

const (
	gotChunk   firstResult = iota // a chunk: the stream commits once it is delivered
	gotEnd                        // the stream closed without a value: an empty success
	gotFailure                    // an error value or FirstChunkTimeout: retry
	gotDone                       // the caller's context ended
)

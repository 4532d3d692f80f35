package retry

import (
	"errors"
	"fmt"
	"time"

	"github.com/steadfast-go/steadfast/internal/errproto"
)

// Outcome says why a call ended. Its values are those of the retry.outcome
// telemetry attribute.
type Outcome string

// The outcomes of a call that failed. A call that succeeded has the
// outcome "success" in telemetry, and no *Error.
const (
	outcomeSuccess           Outcome = "success"
	OutcomeNotRetryable      Outcome = "not_retryable"
	OutcomeExhausted         Outcome = "exhausted"
	OutcomeCanceled          Outcome = "canceled"
	OutcomeDeadline          Outcome = "deadline"
	OutcomeBudgetExhausted   Outcome = "budget_exhausted"
	OutcomeRetryAfterTooLong Outcome = "retry_after_too_long"
	OutcomeCommitted         Outcome = "committed"
	// OutcomeHandedOff ends a call whose next wait is longer than its
	// Continuation's HandOff: the caller sleeps Error.Wait and continues
	// the call then.
	OutcomeHandedOff Outcome = "handed_off"
	// OutcomeRetryTokensExhausted ends a call, or a Batch item, whose
	// attempts threw away RetryConfig.MaxRetryTokens tokens.
	OutcomeRetryTokensExhausted Outcome = "retry_tokens_exhausted"
	// OutcomeSilentTimeout ends a call whose route went quiet. Before the
	// first chunk: at its first attempt that received nothing from its
	// route (no status, no byte) before PerAttemptTimeout or
	// FirstChunkTimeout, both counted from the request, or before the
	// connection closed after a long wait, while another route can serve
	// it (the call is a fallback's candidate with one after it, and no
	// pool below has another deployment). After the first chunk: a stream
	// that stalled (ChunkTimeout), whatever it had sent; while another
	// route can serve it, at the first stall, with no resume or restart on
	// the same route. Retrying a provider that sends nothing only
	// multiplies the wait.
	OutcomeSilentTimeout Outcome = "silent_timeout"
)

// ErrAttemptTimeout is matched (errors.Is) by the error of an attempt that
// ran out of RetryConfig.PerAttemptTimeout, or FirstChunkTimeout, while the
// caller's context was still live; its error.type is "timeout". List it in
// RetryableErrors to keep such attempts retryable.
var ErrAttemptTimeout error = &sentinel{"retry: attempt timed out", "timeout"}

// ErrStreamStalled is matched (errors.Is) by the failure of a stream that
// yielded no value within RetryConfig.ChunkTimeout after its first chunk,
// and is the cause with which its context is cancelled; its error.type is
// "stream_stalled". A stall is retryable: with ResumeStreams it is resumed.
var ErrStreamStalled error = &sentinel{"retry: stream stalled", "stream_stalled"}

// errAttemptAbandoned is matched (errors.Is) by the cause of a Stream
// attempt's context that the retry layer cancelled to move on to the next
// attempt (an error value before the first chunk, FirstChunkTimeout). It
// tells such a cancellation from the caller's own, for which
// context.Cause is context.Canceled: a circuit breaker inside the retry
// layer counts the abandoned attempt as the failure it was.
var errAttemptAbandoned = errors.New("retry: stream attempt abandoned")

// Error is the error of every failed call of a RetryRunnable: how many
// attempts were made, why retrying stopped, and the last attempt's error.
// When the caller's context ended the call, its error is reachable too:
// errors.Is(err, context.Canceled) holds after a cancellation.
type Error struct {
	// Operation is the call's resolved operation, "" when it has none.
	Operation string
	// Outcome says why retrying stopped.
	Outcome Outcome
	// Attempts is the number of attempts made.
	Attempts int
	// Class is the class of failure whose RetryConfig.MaxRetriesByClass
	// bound ended the call (outcome exhausted), "" when none did.
	Class Class
	// Err is the last attempt's error; nil when no attempt was made.
	Err error
	// ContextErr is the caller's context error when the context ended the
	// call (outcome canceled or deadline), else nil.
	ContextErr error
	// Wait is the wait before the next attempt that the call did not
	// sleep (outcome handed_off), else 0.
	Wait time.Duration
}

// Error returns "retry: <operation>: <outcome> after N attempts: <last
// error>", with " (MaxRetriesByClass[<class>])" after the attempts when a
// per-class bound ended the call; "<operation>: " is left out when the call
// has none, and ": <last error>" when no attempt was made and the context
// did not end it.
func (e *Error) Error() string {
	cause := e.Err
	if cause == nil {
		cause = e.ContextErr
	}
	op := ""
	if e.Operation != "" {
		op = e.Operation + ": "
	}
	limit := ""
	if e.Class != "" {
		limit = " (MaxRetriesByClass[" + string(e.Class) + "])"
	}
	if cause == nil {
		return fmt.Sprintf("retry: %s%s after %d attempts%s", op, e.Outcome, e.Attempts, limit)
	}
	return fmt.Sprintf("retry: %s%s after %d attempts%s: %v", op, e.Outcome, e.Attempts, limit, cause)
}

// Unwrap returns the last attempt's error and the context's error, so
// errors.Is and errors.As reach both; and, when the call gave up on its
// route (outcome exhausted, budget_exhausted, retry_after_too_long,
// silent_timeout or deadline), a marker by which the decorators above,
// a fallback's rule, tell that another route may serve it.
func (e *Error) Unwrap() []error {
	var errs [3]error
	n := 0
	for _, err := range [...]error{e.Err, e.ContextErr} {
		if err != nil {
			errs[n], n = err, n+1
		}
	}
	if e.Outcome.spendsRoute() {
		errs[n], n = errproto.ErrRouteSpent, n+1
	}
	if n == 0 {
		return nil
	}
	return append([]error(nil), errs[:n]...) // one allocation, of the size needed
}

// spendsRoute reports whether a call that ended so gave up on its route,
// which another may mend.
func (o Outcome) spendsRoute() bool {
	switch o {
	case OutcomeExhausted, OutcomeBudgetExhausted, OutcomeRetryAfterTooLong, OutcomeSilentTimeout, OutcomeDeadline:
		return true
	}
	return false
}

// Permanent marks err as never worth retrying: a RetryRunnable stops at once
// on an error that wraps it (classification rule 2). Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string   { return e.err.Error() }
func (e *permanentError) Unwrap() error   { return e.err }
func (e *permanentError) Retryable() bool { return false }

// outputError is the failure of an attempt whose output
// RetryConfig.CheckOutput rejected; Err is the check's error. Its
// error.type is "invalid_output", unless Err names its own with an
// ErrorType() method.
type outputError struct {
	Err    error
	output any // what the check rejected
}

// RejectedOutput returns the output that RetryConfig.CheckOutput rejected
// and the check's own error, from the error of that attempt (the one
// NextInput is given) or of a call that ended on it: what a re-ask shows
// the model it answered, and why it was rejected (each provider module's
// Reask takes them). It reports false for any other error.
func RejectedOutput(err error) (output any, reason error, ok bool) {
	if oe, ok := errors.AsType[*outputError](err); ok {
		return oe.output, oe.Err, true
	}
	return nil, nil, false
}

// Error returns "retry: output rejected: " and the check's error.
func (e *outputError) Error() string { return "retry: output rejected: " + e.Err.Error() }

// Unwrap returns the check's error.
func (e *outputError) Unwrap() error { return e.Err }

// ErrorType names the failure for telemetry: the check error's own
// error.type, else "invalid_output".
func (e *outputError) ErrorType() string {
	if t, ok := errors.AsType[interface {
		error
		ErrorType() string
	}](e.Err); ok && t.ErrorType() != "" {
		return t.ErrorType()
	}
	return "invalid_output"
}

// rejected reports whether err is a rejected output, which the budget
// does not see.
func rejected(err error) bool {
	_, ok := err.(*outputError)
	return ok
}

// sentinel is an error value of the package that names its own
// error.type.
type sentinel struct{ msg, etype string }

func (e *sentinel) Error() string     { return e.msg }
func (e *sentinel) ErrorType() string { return e.etype }

// errThrottled is the error of a call whose first attempt the budget
// refused here, before sending it: error.type budget_throttled, a refusal
// on this side of the wire (Local), so that a fallback or a pool moves on
// at once and a breaker does not count it.
var errThrottled error = &localSentinel{sentinel{"retry: budget: first attempt throttled", "budget_throttled"}}

type localSentinel struct{ sentinel }

func (e *localSentinel) Local() bool { return true }

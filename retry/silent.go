package retry

import (
	"context"
	"errors"
	"time"

	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/internal/route"
)

// silentWait is the longest wait after which a connection closed with no
// status is a silent route rather than a blip: half the attempt's timeout,
// at most this.
const silentWait = 10 * time.Second

// silentError is the failure of an attempt that received nothing from its
// route, while another route can serve the call: it ends the call at once,
// outcome and error.type silent_timeout.
type silentError struct{ err error }

func (e *silentError) Error() string     { return "retry: silent route: " + e.err.Error() }
func (e *silentError) Unwrap() error     { return e.err }
func (e *silentError) ErrorType() string { return string(OutcomeSilentTimeout) }

// markSilent returns err as a *silentError when attempt a got nothing
// from its route before it failed and another route can serve the call;
// else err unchanged. timeout is the attempt's own bound on that wait
// (PerAttemptTimeout, FirstChunkTimeout), 0 when it has none.
func markSilent(ctx context.Context, a *attempt, err error, timeout time.Duration) error {
	if !route.HasAlternative(ctx) || route.Elsewhere(a.ctx) || !silent(a, err, timeout) {
		return err // no other route; or a pool below has another deployment, which comes first
	}
	return &silentError{err: err}
}

// silent reports whether err says the route sent nothing: the attempt's
// own timeout ran out (nothing had come: a call that sent a first chunk
// has committed), or the connection closed with no status after a long
// wait.
func silent(a *attempt, err error, timeout time.Duration) bool {
	if _, ok := errors.AsType[*attemptTimeoutError](err); ok {
		return true
	}
	if a.start.IsZero() || timeout <= 0 {
		return false
	}
	if _, ok := errproto.Status(err); ok || errproto.Local(err) {
		return false // an answer, or a refusal made on this side
	}
	if _, ok := errors.AsType[*outputError](err); ok {
		return false // an answer CheckOutput rejected
	}
	if retry, ok := errproto.Retryable(err); ok && !retry {
		return false
	}
	return time.Since(a.start) >= min(timeout/2, silentWait)
}

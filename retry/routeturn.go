package retry

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/internal/route"
)

// shortHint is the longest Retry-After that says a route will serve again
// soon: a failure that comes with one is the provider pacing the call,
// not a broken route, and is retried on it as ever.
const shortHint = time.Second

// routeError is the failure of an attempt whose route has failed twice in
// a row, while another route can serve the call: it ends the call's turn
// on this route (outcome exhausted), so that the fallback or pool above
// moves on after one retry here instead of the whole retry budget.
type routeError struct{ err error }

func (e *routeError) Error() string { return e.err.Error() }
func (e *routeError) Unwrap() error { return e.err }

// routeTurn returns err as a *routeError when it and the attempt before
// it say the route is bad (routeFailure), or it is a malformed event or
// comes with a Retry-After longer than shortHint (the route said it will
// not serve for a while), and
// another route can serve the call (route.HasAlternative, set by the
// fallback or pool above; a pool below that can send the next attempt
// elsewhere comes first); as a *silentError when it is a stall after the
// first chunk; else err as it is. It keeps whether err said the route is
// bad for the next attempt's.
func (c *call) routeTurn(ctx context.Context, a *attempt, err error) error {
	bad, before := routeFailure(c.cfg, err), c.routeBad
	c.routeBad = bad
	if !bad || !route.HasAlternative(ctx) || route.Elsewhere(a.ctx) {
		return err
	}
	switch {
	case errors.Is(err, ErrStreamStalled):
		return &silentError{err: err} // the route went quiet mid-answer: as silent as one that never spoke
	case before || malformed(err):
		return &routeError{err: err}
	}
	if hint, ok := errproto.RetryAfter(err); ok && hint <= c.cfg.maxRetryAfter() {
		// Longer than shortHint (routeFailure), and not so long that the
		// rules end the call for it (retry_after_too_long): another route
		// serves now.
		return &routeError{err: err}
	}
	return err
}

// malformed reports whether err is an event the client could not read:
// the route (a proxy, a gateway) mangles what it forwards, and will
// mangle the retry's too.
func malformed(err error) bool {
	if _, ok := errors.AsType[*json.SyntaxError](err); ok {
		return true
	}
	_, ok := errors.AsType[*json.UnmarshalTypeError](err)
	return ok
}

// routeFailure reports whether err is a failure that says the route is
// bad: one the rules would retry (a 5xx, a 429, a timeout, a stall, a
// cut, a malformed event), but neither a refusal made on this side nor
// one with a Retry-After of shortHint or less.
func routeFailure(cfg *RetryConfig, err error) bool {
	if errproto.Local(err) || !retryable(cfg, err) {
		return false
	}
	hint, ok := errproto.RetryAfter(err)
	return !ok || hint > shortHint
}

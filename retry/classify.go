package retry

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"
)

// The interfaces an error may implement to speak to the retry layer without
// importing it. Any error in the chain counts.
type (
	retryabler interface {
		error
		Retryable() bool
	}
	statusCoder interface {
		error
		StatusCode() int
	}
	httpStatusCoder interface {
		error
		HTTPStatusCode() int
	}
	retryAfterer interface {
		error
		RetryAfter() time.Duration
	}
)

// retryable applies classification rules 2 to 8 (see the package doc) in order;
// rule 1 (the caller's context is done) is the loop's, as it ends the call
// with its own outcome.
func retryable(cfg *RetryConfig, err error) bool {
	// Rule 2: the error's own verdict (retry.Permanent, adapters, breakers).
	if r, ok := errors.AsType[retryabler](err); ok {
		return r.Retryable()
	}
	// Rule 3: the caller's classifier.
	if cfg.RetryIf != nil {
		return cfg.RetryIf(err)
	}
	// Rule 4: an allow-list.
	if len(cfg.RetryableErrors) > 0 {
		for _, target := range cfg.RetryableErrors {
			if errors.Is(err, target) {
				return true
			}
		}
		return false
	}
	// Rule 5: HTTP-like status codes.
	if code, ok := statusCode(err); ok {
		if v, decided := retryableStatus(code); decided {
			return v
		}
	}
	// Rule 6: our own per-attempt timeout expired while the caller's
	// context was fine.
	if errors.Is(err, ErrAttemptTimeout) {
		return true
	}
	// Rule 7: network timeouts and broken connections.
	if transientNetwork(err) {
		return true
	}
	// Rule 8: anything else is presumed transient.
	return true
}

// retryableStatus reports the verdict for an HTTP status code, and whether
// the code decides at all (only 4xx and 5xx do).
func retryableStatus(code int) (retry, decided bool) {
	switch {
	case code == 408, code == 409, code == 425, code == 429:
		return true, true
	case code >= 500 && code <= 599:
		return true, true
	case code >= 400 && code <= 499:
		return false, true
	}
	return false, false
}

func statusCode(err error) (int, bool) {
	if s, ok := errors.AsType[statusCoder](err); ok {
		return s.StatusCode(), true
	}
	if s, ok := errors.AsType[httpStatusCoder](err); ok {
		return s.HTTPStatusCode(), true
	}
	return 0, false
}

func transientNetwork(err error) bool {
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return true
	}
	return errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}

// retryAfter returns the server's hint in err's chain, if positive.
func retryAfter(err error) (time.Duration, bool) {
	if h, ok := errors.AsType[retryAfterer](err); ok {
		if d := h.RetryAfter(); d > 0 {
			return d, true
		}
	}
	return 0, false
}

// ctxOutcome names how a done context ended a call.
func ctxOutcome(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return OutcomeDeadline
	}
	return OutcomeCanceled
}

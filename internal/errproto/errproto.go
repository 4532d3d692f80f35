// Package errproto reads the error protocol by which steadfast's packages
// and the provider adapters speak to each other without importing each
// other: methods an error in the chain may have. Every package reads it
// here, so that classification and the error.type attribute agree
// everywhere.
//
//	Retryable() bool           a verdict: retry, or never
//	StatusCode() int           an HTTP-like status (or HTTPStatusCode() int)
//	RetryAfter() time.Duration the server's hint
//	ErrorType() string         the error's own bounded error.type
//	Local() bool               refused on this side of the wire
//	CannotServe() bool         what answered cannot serve any request now
//
// and one value in a chain, ErrRouteSpent.
package errproto

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"
)

// ErrRouteSpent is in the chain of a retry layer's error when the layer
// gave up on its route, which another route may mend: its attempts or its
// budget ran out, the server asked for a longer wait than the policy
// allows, the route went silent, or the next attempt would come after the
// caller's deadline. A decorator
// over several routes asks for it (errors.Is) instead of reading the
// retry package's outcomes.
var ErrRouteSpent = errors.New("retry: gave up on the route")

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
	errorTyper interface {
		error
		ErrorType() string
	}
	timeouter interface {
		error
		Timeout() bool
	}
)

// Retryable returns the verdict of the first error in err's chain with a
// Retryable method, and whether there is one.
func Retryable(err error) (retry, ok bool) {
	if r, ok := errors.AsType[retryabler](err); ok {
		return r.Retryable(), true
	}
	return false, false
}

// Status returns the status of the first error in err's chain with a
// StatusCode method, else of the first with an HTTPStatusCode method.
func Status(err error) (int, bool) {
	if s, ok := errors.AsType[statusCoder](err); ok {
		return s.StatusCode(), true
	}
	if s, ok := errors.AsType[httpStatusCoder](err); ok {
		return s.HTTPStatusCode(), true
	}
	return 0, false
}

// RetryAfter returns the server's hint in err's chain, when positive.
func RetryAfter(err error) (time.Duration, bool) {
	if h, ok := errors.AsType[retryAfterer](err); ok {
		if d := h.RetryAfter(); d > 0 {
			return d, true
		}
	}
	return 0, false
}

// CannotServe reports whether err, or an error in its chain, says by a
// CannotServe() method returning true that what answered cannot serve any
// request now, whatever the request: a revoked key, an exhausted quota,
// billing. A provider's adapter says so (llmhttp.APIError's Dead); a pool
// reads it to route around the deployment.
func CannotServe(err error) bool {
	c, ok := errors.AsType[interface {
		error
		CannotServe() bool
	}](err)
	return ok && c.CannotServe()
}

// Local reports whether err, or an error in its chain, says by a Local()
// method returning true that the call was refused on this side of the
// wire and never reached what it calls: a rate limiter's refusal, an open
// circuit. Such a failure says nothing of the provider's health, so a
// breaker counts it neither as a failure nor as a success, and a pool
// does not cool a deployment for it.
func Local(err error) bool {
	l, ok := errors.AsType[interface {
		error
		Local() bool
	}](err)
	return ok && l.Local()
}

// Other is the error.type of an error that says nothing of itself.
const Other = "_OTHER"

// Type is the bounded error.type of err, the one rule of every package:
// the error's own ErrorType(), when one in the chain names one; else its
// status code ("429"); else canceled, deadline_exceeded or timeout; else
// the Go type of the innermost error ("*net.OpError"); else _OTHER.
func Type(err error) string {
	if err == nil {
		return Other
	}
	if t, ok := errors.AsType[errorTyper](err); ok {
		if s := t.ErrorType(); s != "" {
			return s
		}
	}
	if code, ok := Status(err); ok {
		return strconv.Itoa(code)
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	}
	if t, ok := errors.AsType[timeouter](err); ok && t.Timeout() {
		return "timeout"
	}
	return fmt.Sprintf("%T", innermost(err))
}

// LastType is the error.type of the last of errs, the failures of a
// decorator's attempts or candidates in order, "" when there is none.
func LastType(errs []error) string {
	if len(errs) == 0 {
		return ""
	}
	return Type(errs[len(errs)-1])
}

// innermost follows err's chain, the first branch of a join, to its end.
func innermost(err error) error {
	for {
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if errs := u.Unwrap(); len(errs) > 0 {
				next = errs[0]
			}
		}
		if next == nil {
			return err
		}
		err = next
	}
}

// The classes of failure, for per-class retry limits (retry.Class).
const (
	ClassRateLimit  = "rate_limit"
	ClassOverloaded = "overloaded"
	ClassServer     = "server"
	ClassTimeout    = "timeout"
	ClassConnection = "connection"
	ClassOther      = "other"
)

// Class is the class of failure err is, the one rule of every package: a
// status of 429 is rate_limit; 503 and 529 overloaded; 408 and 504
// timeout; another 5xx server. With no status (an error event inside a
// stream that began 200, an SDK's error without one): a provider's code
// for a rate limit (rate_limit_exceeded, rate_limit_error, slow_down,
// RESOURCE_EXHAUSTED) is rate_limit, one for an overload
// (overloaded_error, server_is_overloaded, UNAVAILABLE) overloaded; an
// error.type of timeout, deadline_exceeded or stream_stalled is
// timeout; a connection reset, refused or closed, an unexpected EOF or
// another network error is connection; anything else other.
func Class(err error) string {
	if err == nil {
		return ClassOther
	}
	if code, ok := Status(err); ok && code != 0 {
		switch {
		case code == http.StatusTooManyRequests:
			return ClassRateLimit
		case code == http.StatusServiceUnavailable, code == 529:
			return ClassOverloaded
		case code == http.StatusRequestTimeout, code == http.StatusGatewayTimeout:
			return ClassTimeout
		case code >= 500 && code <= 599:
			return ClassServer
		}
		return ClassOther
	}
	switch Type(err) {
	case "timeout", "deadline_exceeded", "stream_stalled":
		return ClassTimeout
	case "rate_limit_exceeded", "rate_limit_error", "slow_down", "RESOURCE_EXHAUSTED":
		return ClassRateLimit
	case "overloaded_error", "server_is_overloaded", "UNAVAILABLE":
		return ClassOverloaded
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return ClassConnection
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return ClassConnection
	}
	return ClassOther
}

package core

import "errors"

// IsLocal reports whether err, or an error in its chain, says by a Local()
// method returning true that the call was refused on this side of the wire
// and never reached what it calls: a rate limiter's refusal, an open circuit.
//
// Such a failure says nothing about the health of the provider, so a
// circuit breaker counts it neither as a failure nor as a success. A
// decorator that refuses calls locally gives its errors a Local() bool
// method; the decorators need not import each other.
func IsLocal(err error) bool {
	l, ok := errors.AsType[interface {
		error
		Local() bool
	}](err)
	return ok && l.Local()
}

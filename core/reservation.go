package core

import "time"

// A Reservation is a waiter's answer to "may it go now, and if not,
// when?", as golang.org/x/time/rate's Reservation is: a ratelimit
// Backend's, a retry Budget's and the fleet module's Redis share answer
// with one, and the layers above them wait for it the same way, bounded by
// the caller's deadline and the most the layer lets a call wait (the
// maxWait a Budget's Reserve is passed, ratelimit's and pool's
// WithMaxWait).
type Reservation struct {
	// Delay is how long the call waits before it may go, 0 for now, when
	// OK. When not OK, it is how long until room would come if the waiter
	// knows (rate.InfDuration for never), and 0 when it does not: a
	// refusal that names no time, never a "now".
	Delay time.Duration
	// OK is false when the call may not go: never, or not within the wait
	// it asked for. It then took nothing.
	OK bool
	// Cancel, when not nil, gives back what the reservation took, for a
	// call that will not go after all (its caller gave up during the wait,
	// or a later check ended it): others may take the room at once. Call
	// it at most once; nil means there is nothing to give back.
	Cancel func()
}

package ratelimit

import "time"

// A SharedLimit keeps a Concurrency's limit in a store that many processes
// share, so that the replicas of a service find one provider's capacity
// together instead of each finding it alone (and each sending it its
// overloads): the fleet module's NewConcurrency keeps one in Redis. The
// store applies the outcomes by the same arithmetic as a Concurrency's own
// limit (ratelimit/testdata/aimd.json, its test vectors) and gives each
// process its share.
//
// A Concurrency with a SharedLimit reads Share as a call is admitted and
// as one ends, so Share must be cheap (an atomic load), and hands each
// call's end to Observe, which must not block: a store that talks to a
// server sends the outcomes in batches. While Share reports !ok (the store
// cannot be reached), the Concurrency adapts its limit alone, from the
// last share it had, and Observe is not called.
type SharedLimit interface {
	// Observe hands the store what one call's end says of the provider.
	Observe(o Outcome)
	// Share reports the limit this process may use now, and how many
	// times the shared limit has been cut: an Outcome's Epoch.
	Share() (limit float64, epoch uint64, ok bool)
}

// Outcome is what one call's end says of the provider's capacity, as a
// Concurrency hands it to a SharedLimit.
type Outcome struct {
	// Cost is the call's permit: 1, or ConcurrencyConfig.Cost's weight.
	Cost float64
	// Overload is a 429, a 529 or an overloaded 503; Hint is its
	// Retry-After or reset, 0 when it said none.
	Overload bool
	Hint     time.Duration
	// Clean is an answer, with no sign of overload.
	Clean bool
	// TTFT is a stream's time to its first chunk; 0 when not read.
	TTFT time.Duration
	// Epoch is the count of cuts when the call was admitted (Share's):
	// an overload cuts the limit only if no cut came since, so that one
	// burst of 429s is one cut.
	Epoch uint64
	// Saturated is whether the limit was in use when the call was
	// admitted (at least half of it in flight, or calls waiting): only
	// then does a clean answer count towards raising it.
	Saturated bool
	// InFlight is the cost this process has in flight once the call has
	// ended. After a cut, the calls every process admitted before it
	// must end before the fleet's calls in flight are down to the new
	// limit; until the store sees them there, an overload is the same
	// burst's and does not cut the limit again.
	InFlight float64
}

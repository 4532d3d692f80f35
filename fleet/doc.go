// Package fleet shares steadfast's rate limit and retry budget among every
// replica of a service, through Redis.
//
// A provider's quota belongs to the organisation: every process that holds
// the API key draws from the same requests and tokens per minute. A
// Limiter is a ratelimit.Backend kept in Redis, so every process that names
// the same key draws from one bucket; a Budget is a retry.Budget that runs
// package budget's law over the whole fleet's answers, so an outage seen
// by eight replicas is held to one budget's retries, not eight, and a
// collapse is throttled by what the whole fleet sends; a
// Concurrency is a ratelimit.Concurrency whose limit on calls in flight
// the replicas find together.
//
// Redis is never a new way to fail. Every Redis call is bounded by a short
// timeout (WithTimeout), which is why the client must have
// ContextTimeoutEnabled set. When Redis cannot be reached, the Limiter
// decides locally with its share of the limit (WithFallbackShare) and the
// Budget runs the law over this process's answers alone; the
// fall back is counted in the fleet.fallbacks metric and logged once, each
// decision made locally is a fleet.fallback event on the caller's span, and
// shared decisions resume when Redis answers again. No call fails or waits
// longer than the timeout because of Redis. Neither edge of an outage
// lets the fleet exceed its quota: a Limiter that falls back starts its
// local bucket with its share of the shared bucket as it last saw it,
// promised waits included, and one that comes back takes from the shared
// bucket what it took locally (a Redis restarted empty starts full) and,
// until every replica is seen back, counts those not yet back as spending
// their shares; the Budget keeps one token bucket on both sides.
//
// The Budget makes no Redis round trip on a call's path: it counts answers
// in memory and exchanges the counts with Redis every WithSyncInterval
// (100 ms by default) from a goroutine of its own, which Close ends. The
// Limiter makes one round trip per call, the price of a bucket that is
// exact across the fleet; a call whose output reports its usage
// (ratelimit.WithUsage) makes a second one to settle it, and a call whose
// chain reads the provider's rate-limit headers one more, to count it
// against what the whole fleet's answers say is left
// (Limiter.ReserveHeaders).
package fleet

package ratelimit

import (
	"time"

	"go.opentelemetry.io/otel/metric"
)

// Option configures a Runnable. Nil options, and options given nil
// arguments, are ignored.
type Option func(*config)

type config struct {
	maxWait *time.Duration
	mp      metric.MeterProvider
	cost    func(input any) int
	usage   func(output any) int
}

// WithMaxWait makes a call wait at most d for its tokens (and never past
// its context's deadline); a longer wait is refused with a *LimitedError.
// WithMaxWait(0) never waits: a call fails at once when its tokens are not
// free. The default is to wait as long as the deadline allows, but a call
// that spends its deadline waiting has none left for its answer: it fails
// in the provider with its tokens spent. Leave room for the answer. A
// negative d is an error from New.
func WithMaxWait(d time.Duration) Option { return func(c *config) { c.maxWait = &d } }

// WithMeterProvider sets the meter provider; the default is the global one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	}
}

// WithCost sets what a call costs, in tokens, from its input: for an LLM,
// an estimate of the tokens it will use (the prompt's plus the most the
// answer may take), so that the bucket counts tokens per minute instead of
// requests. A Batch costs the sum of its items' costs, taken at once. The
// default is one token a call (one per Batch item). A negative cost fails
// the call with a permanent error naming it.
//
// For a bucket of requests per minute and another of tokens per minute,
// stack two Runnables: one with WithCost and WithUsage over the token
// bucket, one without over the request bucket.
func WithCost(cost func(input any) int) Option {
	return func(c *config) {
		if cost != nil {
			c.cost = cost
		}
	}
}

// WithUsage settles a call's cost once it has succeeded, from the real
// usage its output reports (the tokens the provider counted): the
// difference from WithCost's estimate is taken from the bucket, into debt
// if need be, or given back. It returns a negative number when the output
// does not say, and the estimate then stands; it stands too for a call
// that failed. A Batch settles each item that succeeded. A Stream calls
// usage with every value it delivers and settles with their sum when the
// stream ends without an error, if any value reported a usage; usage runs
// on the goroutine that forwards the stream, keep it quick.
func WithUsage(usage func(output any) int) Option {
	return func(c *config) {
		if usage != nil {
			c.usage = usage
		}
	}
}

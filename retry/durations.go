package retry

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// durationBuckets are the bucket boundaries of the duration histograms,
// in seconds: 10 ms to 82 s, doubling, as the GenAI conventions advise for
// LLM calls (a cached answer's first chunk to a long answer's whole).
var durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

// attemptBuckets are the bucket boundaries of retry.call.attempts.
var attemptBuckets = []float64{0, 1, 2, 3, 4, 5, 6, 8, 10, 16}

// durations are the histograms of how long calls, attempts and the waits
// between them take.
type durations struct {
	call       metric.Float64Histogram // retry.call.duration: a call's start to its end
	attempts   metric.Int64Histogram   // retry.call.attempts: attempts per call
	delay      metric.Float64Histogram // retry.call.delay: a call's time between attempts
	attempt    metric.Float64Histogram // retry.attempt.duration: an attempt's start to its end
	firstChunk metric.Float64Histogram // retry.attempt.time_to_first_chunk: a stream attempt's start to its first chunk
}

// newDurations makes the histograms on m.
func newDurations(m metric.Meter) (durations, error) {
	var d durations
	var err error
	seconds := func(name, desc string) (metric.Float64Histogram, error) {
		h, err := m.Float64Histogram(name, metric.WithDescription(desc), metric.WithUnit("s"),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
		if err != nil {
			return nil, fmt.Errorf("retry: metric %s: %w", name, err)
		}
		return h, nil
	}
	if d.call, err = seconds("retry.call.duration", "How long calls took, from the call to its end (a stream's last chunk), by outcome."); err != nil {
		return d, err
	}
	if d.attempts, err = m.Int64Histogram("retry.call.attempts", metric.WithDescription("Attempts each call made, by outcome."),
		metric.WithUnit("{attempt}"), metric.WithExplicitBucketBoundaries(attemptBuckets...)); err != nil {
		return d, fmt.Errorf("retry: metric retry.call.attempts: %w", err)
	}
	if d.delay, err = seconds("retry.call.delay", "The time each call spent between its attempts (backoff, the budget's pacing), by outcome."); err != nil {
		return d, err
	}
	if d.attempt, err = seconds("retry.attempt.duration", "How long attempts took, from the request to the answer or the failure."); err != nil {
		return d, err
	}
	d.firstChunk, err = seconds("retry.attempt.time_to_first_chunk", "How long stream attempts took, from the request to the first chunk.")
	return d, err
}

// attemptStarted notes, for the durations, that the call's attempt a
// starts now. It is called only when metrics are on.
func (c *call) attemptStarted(a *attempt) {
	now := time.Now()
	if !c.lastEnd.IsZero() {
		c.delay += now.Sub(c.lastEnd)
	}
	a.start = now
}

// attemptEnded records attempt a's duration, with opts; it is called
// only when metrics are on.
func (c *call) attemptEnded(ctx context.Context, a *attempt, opts ...metric.RecordOption) {
	if a.start.IsZero() {
		return // an attempt a panic cut short, rebuilt by failUnwound
	}
	now := time.Now()
	c.r.tel.durations.attempt.Record(ctx, now.Sub(a.start).Seconds(), opts...)
	c.lastEnd = now
}

// firstChunk records the time to the first chunk of the live stream
// attempt a; it is called only when metrics are on.
func (c *call) firstChunk(ctx context.Context, a *attempt) {
	if !a.start.IsZero() {
		c.r.tel.durations.firstChunk.Record(ctx, time.Since(a.start).Seconds(), c.attrs.recordOK...)
	}
}

// callEnded records the call's duration, attempts and delay, with opts;
// it is called only when metrics are on.
func (c *call) callEnded(ctx context.Context, attempts int, opts ...metric.RecordOption) {
	d := &c.r.tel.durations
	d.call.Record(ctx, time.Since(c.began).Seconds(), opts...)
	d.attempts.Record(ctx, int64(attempts), opts...)
	d.delay.Record(ctx, c.delay.Seconds(), opts...)
}

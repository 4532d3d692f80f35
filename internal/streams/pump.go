// Package streams holds the stream machinery of steadfast's decorators:
// Pump, the forwarder every decorator uses to pass a stream on, and
// Forward, the commit-at-first-chunk machine of the decorators that may
// move to another attempt until the first chunk reaches the consumer
// (retry, fallback).
package streams

import (
	"context"
	"time"
)

// End is how a stream ended.
type End uint8

const (
	// Completed: the stream closed while the caller's context was live.
	Completed End = iota
	// Failed: the stream's last value was an error, Result.Err.
	Failed
	// Canceled: the caller's context ended the stream, or the consumer
	// stopped reading and cancelled it.
	Canceled
	// GaveUp: no attempt committed; Result.Err, the call's error, was
	// delivered as the only value.
	GaveUp
	// Stalled: no value came within PumpConfig.Gap. Pump delivers
	// nothing for it: its caller decides what the consumer gets.
	Stalled
)

// Result is how a forwarded stream ended.
type Result struct {
	End End
	// Err is the error value of a Failed stream, or the call's error of
	// one that GaveUp.
	Err error
	// Delivered reports that Err reached the consumer.
	Delivered bool
	// Chunks is the number of chunks (values that are not errors)
	// delivered to the consumer.
	Chunks int
}

// PumpConfig says how Pump forwards; its zero value forwards everything
// with no bound on the wait.
type PumpConfig struct {
	// Gap, when positive, bounds the wait for each value after the one
	// before was delivered (a slow consumer is not a stall): past it the
	// stream has Stalled. One timer serves the whole stream.
	Gap time.Duration
	// HoldErrors makes Pump return an error value without delivering it,
	// for a caller that may resume the stream instead.
	HoldErrors bool
	// Seen, when not nil, sees each chunk after it was delivered, on
	// Pump's goroutine.
	Seen func(any)
	// Limit, when positive, makes Pump return, Completed, once it has
	// delivered that many chunks, reading no more of in.
	Limit int
}

// Pump forwards in's values to out, in order, until in closes, yields an
// error value (delivered as the last value, unless HoldErrors: nothing
// after it is read), stalls, or ctx is done. It allocates nothing per
// value.
func Pump(ctx context.Context, in <-chan any, out chan<- any, cfg PumpConfig) Result {
	var r Result
	var t *time.Timer
	var gap <-chan time.Time // nil, never ready, without a Gap
	if cfg.Gap > 0 {
		t = time.NewTimer(cfg.Gap)
		defer t.Stop()
		gap = t.C
	}
	for {
		select {
		case v, ok := <-in:
			if r.take(ctx, v, ok, out, &cfg) {
				return r
			}
			if t != nil {
				t.Reset(cfg.Gap) // safe on a fired or stopped timer since Go 1.23
			}
		case <-gap:
			r.End = Stalled
			return r
		case <-ctx.Done():
			r.End = Canceled
			return r
		}
	}
}

// take handles one receive from the stream and reports whether the stream
// has ended.
func (r *Result) take(ctx context.Context, v any, ok bool, out chan<- any, cfg *PumpConfig) bool {
	if !ok {
		if ctx.Err() != nil { // closed because its context ended
			r.End = Canceled
		}
		return true
	}
	if err, isErr := v.(error); isErr {
		r.End, r.Err = Failed, err
		if !cfg.HoldErrors {
			r.Delivered = Send(ctx, out, err)
		}
		return true
	}
	if !Send(ctx, out, v) {
		r.End = Canceled
		return true
	}
	r.Chunks++
	if cfg.Seen != nil {
		cfg.Seen(v)
	}
	return r.Chunks == cfg.Limit
}

// Package streams holds the stream machinery of steadfast's decorators:
// Pump, the forwarder every decorator uses to pass a stream on, and
// Forward, the commit-at-first-chunk machine of the decorators that may
// move to another attempt until the first chunk reaches the consumer
// (retry, fallback).
package streams

import (
	"context"

	"github.com/steadfast-go/steadfast/core"
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

// Pump forwards in's values to out, in order, until in closes, yields an
// error value (delivered as the last value: nothing after it is read), or
// ctx is done. seen, when not nil, sees each chunk after it was delivered,
// on Pump's goroutine. Pump allocates nothing per value.
func Pump(ctx context.Context, in <-chan any, out chan<- any, seen func(any)) Result {
	var r Result
	for {
		select {
		case v, ok := <-in:
			if !ok {
				if ctx.Err() != nil { // closed because its context ended
					r.End = Canceled
				}
				return r
			}
			if err, isErr := v.(error); isErr {
				r.End, r.Err = Failed, err
				r.Delivered = core.Send(ctx, out, err)
				return r
			}
			if !core.Send(ctx, out, v) {
				r.End = Canceled
				return r
			}
			r.Chunks++
			if seen != nil {
				seen(v)
			}
		case <-ctx.Done():
			r.End = Canceled
			return r
		}
	}
}

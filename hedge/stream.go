package hedge

import (
	"context"
	"errors"
	"fmt"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/panics"
	"github.com/steadfast-go/steadfast/internal/streams"
)

var errNoStream = errors.New("hedge: Stream returned neither a channel nor an error")

// Stream races the attempts up to their first chunk: the first attempt to
// yield a chunk (or to end empty) wins, the others are cancelled before
// any of their chunks can reach the consumer, and the winner's stream is
// forwarded whole. When every attempt fails, the *Error is the stream's
// only value. The race and the forwarding run on one goroutine,
// which ends when the stream ends or ctx is done.
func (r *Runnable) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	if !r.hedged {
		return r.targets[0].Stream(ctx, input, opts...)
	}
	out := make(chan any)
	go r.forward(ctx, input, opts, out)
	return out, nil
}

// Resume continues a stream on the target it won on, unhedged: a resumed
// stream has one source to continue from. With alternates, the target is
// kept in the call's core.State. It answers core.ErrNotResumable when that
// target cannot resume or is not known.
func (r *Runnable) Resume(ctx context.Context, input any, last any, opts ...core.Option) (<-chan any, error) {
	target := r.targets[0]
	if len(r.targets) > 1 {
		target = nil
		if k, ok := r.owner.Load(ctx); ok && k >= 0 && k < len(r.targets) {
			target = r.targets[k]
		}
	}
	if resumer, ok := target.(core.Resumer); ok && resumer.CanResume(ctx) {
		return resumer.Resume(ctx, input, last, opts...)
	}
	return nil, fmt.Errorf("hedge: no target to resume the stream on: %w", streams.ErrNotResumable)
}

// CanResume reports whether the stream of ctx's call can resume: on the
// target it won on. Outside a call, whether any target can.
func (r *Runnable) CanResume(ctx context.Context) bool {
	if core.StateFrom(ctx) == nil || len(r.targets) == 1 {
		for _, t := range r.targets {
			if streams.CanResume(ctx, t) {
				return true
			}
		}
		return false
	}
	k, ok := r.owner.Load(ctx)
	return ok && k >= 0 && k < len(r.targets) && streams.CanResume(ctx, r.targets[k])
}

func (r *Runnable) forward(ctx context.Context, input any, opts []core.Option, out chan<- any) {
	defer close(out)
	defer func() {
		if v := recover(); v != nil { // the budget panicked, on our goroutine
			streams.Send(ctx, out, panics.Recovered(v))
		}
	}()
	win, err := r.race(ctx, callspan.Stream, r.streamLt, func(ctx context.Context, t core.Runnable) answer {
		return firstChunk(ctx, t, input, opts)
	})
	if err != nil {
		streams.Send(ctx, out, err)
		return
	}
	defer win.cancel(nil)
	if win.ch == nil || !streams.Send(ctx, out, win.out) {
		return
	}
	if len(r.targets) > 1 {
		r.owner.Store(ctx, win.k%len(r.targets))
	}
	streams.Pump(ctx, win.ch, out, streams.PumpConfig{})
}

// firstChunk opens t's stream and waits for its first value: a chunk wins
// the attempt, an error value or a failed creation fails it.
func firstChunk(ctx context.Context, t core.Runnable, input any, opts []core.Option) answer {
	ch, err := t.Stream(ctx, input, opts...)
	if err == nil && ch == nil {
		err = errNoStream
	}
	if err != nil {
		return answer{err: err}
	}
	select {
	case v, ok := <-ch:
		switch {
		case !ok && ctx.Err() != nil:
			return answer{err: context.Cause(ctx)}
		case !ok:
			return answer{} // an empty stream: a success with nothing to forward
		}
		if err, isErr := v.(error); isErr {
			return answer{err: err}
		}
		return answer{out: v, ch: ch}
	case <-ctx.Done():
		return answer{err: context.Cause(ctx)}
	}
}

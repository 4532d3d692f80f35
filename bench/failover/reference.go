package failover

import (
	"context"
	"errors"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/steadfast-go/steadfast/bench"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/internal/streams"
)

// reference is the router the chain is measured against: each candidate
// gets an attempt and, when the failure may pass (anything but a 4xx
// other than 408 and 429), one retry after backoff; then the next
// candidate. A stream's first chunk must come within FirstChunk of the
// request, each later one within Chunk of the one before; a stream that
// breaks after its first chunk starts again (a core.Reset, then the new
// answer) unless it delivered a tool call. It knows no budget, no
// Retry-After, no silence rule: what "moves on after one retry" means.
type reference struct {
	candidates []core.Runnable
	timing     Timing
	backoff    time.Duration
}

// Invoke tries each candidate in turn.
func (r *reference) Invoke(ctx context.Context, input any) (any, error) {
	var err error
	for _, c := range r.candidates {
		for try := range 2 {
			if try > 0 && bench.Sleep(ctx, r.backoff) != nil {
				return nil, ctx.Err()
			}
			actx, cancel := context.WithTimeout(ctx, r.timing.PerAttempt)
			var out any
			out, err = c.Invoke(actx, input)
			cancel()
			if err == nil {
				return out, nil
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !mayPass(err) {
				break
			}
		}
	}
	return nil, err
}

// Stream tries each candidate's stream in turn, on its own goroutine,
// which ends when the stream does or ctx is done.
func (r *reference) Stream(ctx context.Context, input any) <-chan any {
	out := make(chan any)
	go func() {
		defer close(out)
		var s refStream
		var err error
		for _, c := range r.candidates {
			for try := range 2 {
				if try > 0 && bench.Sleep(ctx, r.backoff) != nil {
					streams.Send(ctx, out, ctx.Err())
					return
				}
				var done bool
				if done, err = s.attempt(ctx, c, input, r.timing, out); done {
					return
				}
				if ctx.Err() != nil || s.tool {
					streams.Send(ctx, out, err)
					return
				}
				if !mayPass(err) {
					break
				}
			}
		}
		streams.Send(ctx, out, err)
	}()
	return out
}

// refStream is what a reference stream has delivered.
type refStream struct {
	delivered bool // a chunk reached the consumer: a new answer needs a Reset
	tool      bool // a tool call did: nothing may start again
}

// attempt streams one attempt to out: done when it ended the call (it
// completed, or the consumer left), else its failure.
func (s *refStream) attempt(ctx context.Context, c core.Runnable, input any, t Timing, out chan<- any) (done bool, err error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errFirst, errGap := errors.New("no first chunk in time"), errors.New("stream stalled")
	firstBy := time.AfterFunc(t.FirstChunk, func() { cancel(errFirst) }) // from the request
	defer firstBy.Stop()
	var gap *time.Timer
	defer func() {
		if gap != nil {
			gap.Stop()
		}
	}()
	ch, err := c.Stream(actx, input)
	if err != nil {
		return false, cause(actx, err)
	}
	for v := range ch {
		if e, ok := v.(error); ok {
			return false, cause(actx, e)
		}
		if gap == nil {
			firstBy.Stop()
			if s.delivered && !streams.Send(ctx, out, core.Reset{}) {
				return true, nil
			}
		} else {
			gap.Stop()
		}
		if !streams.Send(ctx, out, v) {
			return true, nil
		}
		s.delivered = true
		s.tool = s.tool || isToolCall(v)
		if gap == nil {
			gap = time.AfterFunc(t.Chunk, func() { cancel(errGap) })
		} else {
			gap.Reset(t.Chunk)
		}
	}
	if err := context.Cause(actx); err != nil {
		return false, err
	}
	return true, nil
}

// cause is the reason an attempt's context ended, if it did, else err.
func cause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil {
		return c
	}
	return err
}

// mayPass reports whether a failure may pass on a retry: anything but
// a 4xx other than 408 and 429.
func mayPass(err error) bool {
	status, ok := errproto.Status(err)
	return !ok || status < 400 || status >= 500 || status == 408 || status == 429
}

func isToolCall(v any) bool {
	ch, ok := v.(oai.ChatCompletionChunk)
	return ok && len(ch.Choices) > 0 && len(ch.Choices[0].Delta.ToolCalls) > 0
}

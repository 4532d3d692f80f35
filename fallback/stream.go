package fallback

import (
	"context"
	"errors"
	"fmt"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/panics"
	"github.com/steadfast-go/steadfast/internal/route"
	"github.com/steadfast-go/steadfast/internal/run"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/internal/usage"
)

var (
	// errSwitched is the cause with which the stream of a candidate that
	// failed is cancelled.
	errSwitched = errors.New("fallback: moved to the next candidate")
	// errNoStream is the failure of a candidate whose Stream returned
	// neither a channel nor an error.
	errNoStream = errors.New("fallback: candidate's Stream returned neither a channel nor an error")
)

// Stream opens the first candidate's stream, moving to the next while
// creation fails, and forwards it. Until its first chunk reaches the
// consumer, an error value moves the call to the next candidate (when the
// failure allows it). After it, a failure is the last value, unless the
// caller passed core.WithResets: then, within WithMaxRestarts, the stream
// goes on as a core.Reset and the next candidate's stream of the original
// input (event fallback.restart). No chunk of a candidate moved away from
// is ever delivered after that move. When no candidate serves, the *Error
// is returned, or is the stream's last value once a stream was open.
func (r *Runnable) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	ctx, c := r.tel.begin(ctx, callspan.Stream)
	ctx, way, err := r.way(ctx)
	if err != nil {
		c.fail(err)
		return nil, err
	}
	s := &streamCall{r: r, c: c, input: input, opts: opts, way: way}
	restarts := r.maxRestarts > 0 && len(way) > 1 && streams.AcceptsResets(opts...)
	if restarts {
		ctx, s.tools = route.WatchToolCalls(ctx)
	}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	return streams.Forward(ctx, streams.Source{C: s.ch, Cancel: s.cancel}, s,
		streams.Config{Abandon: func(error) error { return errSwitched }, Resume: restarts}), nil
}

// Resume continues a stream of this call (kept in the call's core.State)
// on the candidate it committed on, with that candidate's Resume: a
// fallback never moves a stream after its first chunk. It answers
// core.ErrNotResumable when that candidate cannot resume, or the stream
// is not known: it is not this call's, or committed on no candidate of
// this Runnable.
func (r *Runnable) Resume(ctx context.Context, input any, last any, opts ...core.Option) (<-chan any, error) {
	if i, ok := r.owner.Load(ctx); ok && i >= 0 && i < len(r.candidates) {
		if resumer, ok := r.candidates[i].(core.Resumer); ok && resumer.CanResume(ctx) {
			return resumer.Resume(ctx, r.inputFor(i, input), last, opts...)
		}
	}
	return nil, fmt.Errorf("fallback: no candidate to resume the stream on: %w", streams.ErrNotResumable)
}

// CanResume reports whether the stream of ctx's call can resume: on the
// candidate it committed on. Outside a call, whether any candidate can.
func (r *Runnable) CanResume(ctx context.Context) bool {
	if core.StateFrom(ctx) == nil {
		return r.resumable
	}
	i, ok := r.owner.Load(ctx)
	return ok && i >= 0 && i < len(r.candidates) && streams.CanResume(ctx, r.candidates[i])
}

// streamCall is the state of one Stream call: the streams.Committer of
// fallback.
type streamCall struct {
	r      *Runnable
	c      *call
	input  any
	opts   []core.Option
	way    []int   // the candidates, by index, in the order tried
	i      int     // the current candidate's place in way
	errs   []error // the failures of the candidates moved away from
	ch     <-chan any
	cancel context.CancelCauseFunc
	tokens *usage.Meter // the current candidate's, when counted
	// tools is whether a candidate's stream delivered a tool call, when
	// the call may restart.
	tools *route.ToolWatch
	// restarts counts the restarts made; restarting is the failure that
	// one under way follows, until its first chunk is delivered.
	restarts   int
	restarting error
}

// start opens a stream on the caller's goroutine, then hands the call to
// the forwarding goroutine.
func (s *streamCall) start(ctx context.Context) error {
	defer s.c.EndIfUnwinding()
	if e := s.open(ctx); e != nil {
		s.c.fail(e)
		return e
	}
	s.c.HandedOff = true
	return nil
}

// open opens the stream of candidate s.way[s.i], moving on while creation fails
// with a failure that allows it. It returns the *Error when none opens.
func (s *streamCall) open(ctx context.Context) *Error {
	for ; ; s.i++ {
		sctx, cancel := context.WithCancelCause(ctx)
		sctx, tokens := usage.Sub(sctx) // a candidate that fails before the commit: thrown away
		i := s.way[s.i]
		var ch <-chan any
		sctx, ticket, err := run.Take(sctx, 1)
		if err == nil {
			ch, err = s.r.candidates[i].Stream(s.r.routeContext(sctx, s.i, s.way), s.r.inputFor(i, s.input), s.opts...)
			if err == nil && ch == nil {
				err = errNoStream
			}
			ticket.Settle(err)
		}
		if err == nil {
			s.ch, s.cancel, s.tokens = ch, cancel, tokens
			return nil
		}
		cancel(errSwitched)
		tokens.Discard()
		if e := s.failed(ctx, err); e != nil {
			return e
		}
	}
}

// failed records the current candidate's failure and returns the *Error
// that ends the call when it may not move on, else nil.
func (s *streamCall) failed(ctx context.Context, err error) *Error {
	s.errs = append(s.errs, err)
	if !s.r.next(ctx, s.i, s.way, err) {
		return s.r.newError(s.errs, s.way)
	}
	s.c.switched(ctx, s.way[s.i], s.r.names, err)
	return nil
}

// Next implements streams.Committer: candidate s.i failed before the
// commit; the next candidate's stream, when the failure allows it.
func (s *streamCall) Next(ctx context.Context, err error) (streams.Source, error) {
	s.tokens.Discard()
	e := s.failed(ctx, err)
	if e == nil {
		s.i++
		e = s.open(ctx)
	}
	if e != nil {
		return streams.Source{}, e
	}
	return streams.Source{C: s.ch, Cancel: s.cancel}, nil
}

// Committed implements streams.Committer: from here on nothing moves. The
// candidate is remembered for a Resume of this call.
func (s *streamCall) Committed(ctx context.Context) {
	s.restarting = nil
	if s.r.resumable {
		s.r.owner.Store(ctx, s.way[s.i])
	}
}

// Resume implements streams.Committer, for a call that may restart: the
// candidate failed after the commit with err; the next candidate's
// stream starts the answer again, when one may. A candidate that fails
// before its first chunk in a restart moves the restart on, as before a
// commit.
func (s *streamCall) Resume(ctx context.Context, err error, _ any) (streams.Source, error) {
	s.tokens.Discard() // its chunks are voided
	if s.restarting == nil {
		if !s.mayRestart(ctx, err) {
			return streams.Source{}, err
		}
		s.restarts++
		s.restarting = err
		s.errs = append(s.errs, err)
		s.c.restarted(ctx, s.way[s.i], s.r.names, err)
	} else if e := s.failed(ctx, err); e != nil {
		return streams.Source{}, e
	}
	s.i++
	if e := s.open(ctx); e != nil {
		return streams.Source{}, e
	}
	return streams.Source{C: s.ch, Cancel: s.cancel, Restart: s.restarting}, nil
}

// mayRestart reports whether the committed stream of candidate s.i,
// broken by err, may start again on the next: there is one, the caller's
// context is live, restarts remain, err is neither a panic (a bug, not a
// route) nor the caller's deadline or cancellation as a retry layer saw
// it, and no tool call the consumer may have run was delivered, unless
// every candidate says it is idempotent.
func (s *streamCall) mayRestart(ctx context.Context, err error) bool {
	if s.i+1 >= len(s.way) || ctx.Err() != nil || s.restarts >= s.r.maxRestarts || callersOwn(err) {
		return false
	}
	if s.tools.Called() {
		for _, c := range s.r.candidates {
			if !route.SaysIdempotent(c) {
				return false
			}
		}
	}
	return true
}

// callersOwn reports a failure no other candidate mends: a panic, or the
// caller's deadline or cancellation (a retry layer's error that its
// caller's context ended holds the context's error).
func callersOwn(err error) bool {
	if _, ok := errors.AsType[*core.PanicError](err); ok {
		return true
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Ended implements streams.Committer: it ends the call.
func (s *streamCall) Ended(ctx context.Context, r streams.Result) {
	switch r.End {
	case streams.Completed:
		s.c.succeed(s.i, s.r.names[s.i])
	case streams.Failed, streams.GaveUp:
		s.c.fail(r.Err)
	case streams.Canceled:
		s.c.fail(context.Cause(ctx))
	}
}

// Unwound implements streams.Committer: a panic on the forwarding
// goroutine is the stream's last value.
func (s *streamCall) Unwound(_ context.Context, v any, _ int) (error, bool) {
	if s.c.Ended {
		return nil, false
	}
	pe := panics.Recovered(v)
	s.c.fail(pe)
	return pe, true
}

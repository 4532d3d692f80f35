package fallback

import (
	"context"
	"errors"

	"github.com/steadfast-go/steadfast/core"
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
// failure allows it); after it, nothing moves: a failure is the last value.
// No chunk of a candidate moved away from is ever delivered. When no
// candidate serves, the *Error is returned, or is the stream's only value
// once a stream was open.
func (r *Runnable) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	ctx, c := r.tel.begin(ctx, methodStream)
	s := &streamCall{r: r, c: c, input: input, opts: opts}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	out := make(chan any)
	go s.forward(ctx, out)
	return out, nil
}

// streamCall is the state of one Stream call.
type streamCall struct {
	r      *Runnable
	c      *call
	input  any
	opts   []core.Option
	i      int     // the current candidate
	errs   []error // the failures of the candidates moved away from
	ch     <-chan any
	cancel context.CancelCauseFunc
}

// start opens a stream on the caller's goroutine, then hands the call to
// the forwarding goroutine.
func (s *streamCall) start(ctx context.Context) error {
	defer s.c.EndIfUnwinding()
	if e := s.open(ctx); e != nil {
		s.c.fail(e)
		return e
	}
	s.c.Settled = true // the forwarding goroutine owns the call from here
	return nil
}

// open opens the stream of candidate s.i, moving on while creation fails
// with a failure that allows it. It returns the *Error when none opens.
func (s *streamCall) open(ctx context.Context) *Error {
	for ; ; s.i++ {
		sctx, cancel := context.WithCancelCause(ctx)
		ch, err := s.r.candidates[s.i].Stream(sctx, s.r.inputFor(s.i, s.input), s.opts...)
		if err == nil && ch == nil {
			err = errNoStream
		}
		if err == nil {
			s.ch, s.cancel = ch, cancel
			return nil
		}
		cancel(errSwitched)
		if e := s.failed(ctx, err); e != nil {
			return e
		}
	}
}

// failed records candidate s.i's failure and returns the *Error that ends
// the call when it may not move on, else nil.
func (s *streamCall) failed(ctx context.Context, err error) *Error {
	s.errs = append(s.errs, err)
	if !s.r.next(ctx, s.i, err) {
		return s.r.newError(s.errs)
	}
	s.c.switched(ctx, s.i, s.r.names, err)
	return nil
}

// forward runs on the stream's goroutine: it awaits the first chunk,
// moving on to the next candidate on failures, then pumps the rest.
func (s *streamCall) forward(ctx context.Context, out chan<- any) {
	s.c.Settled = false // this goroutine owns the call now
	defer close(out)
	defer func() { s.cancel(nil) }()
	defer s.recoverPanic(ctx, out)
	if s.awaitFirst(ctx, out) {
		s.pump(ctx, out)
	}
}

// awaitFirst delivers the first chunk of the first candidate that yields
// one, and reports whether it did; when not, the call has ended.
func (s *streamCall) awaitFirst(ctx context.Context, out chan<- any) bool {
	for {
		var v any
		var ok bool
		select {
		case v, ok = <-s.ch:
		case <-ctx.Done():
			s.c.fail(context.Cause(ctx))
			return false
		}
		err, isErr := v.(error)
		switch {
		case !ok:
			s.end(ctx)
			return false
		case !isErr:
			if !core.Send(ctx, out, v) {
				s.c.fail(context.Cause(ctx))
				return false
			}
			return true
		}
		s.cancel(errSwitched)
		e := s.failed(ctx, err)
		if e == nil {
			s.i++
			e = s.open(ctx)
		}
		if e != nil {
			core.Send(ctx, out, e)
			s.c.fail(e)
			return false
		}
	}
}

// pump forwards every value after the first chunk.
func (s *streamCall) pump(ctx context.Context, out chan<- any) {
	for {
		select {
		case v, ok := <-s.ch:
			if !ok {
				s.end(ctx)
				return
			}
			if err, isErr := v.(error); isErr {
				core.Send(ctx, out, err)
				s.c.fail(err)
				return
			}
			if !core.Send(ctx, out, v) {
				s.c.fail(context.Cause(ctx))
				return
			}
		case <-ctx.Done():
			s.c.fail(context.Cause(ctx))
			return
		}
	}
}

// end ends a stream that closed: a success, unless the caller's context
// ended it.
func (s *streamCall) end(ctx context.Context) {
	if ctx.Err() != nil {
		s.c.fail(context.Cause(ctx))
		return
	}
	s.c.succeed(s.i, s.r.names[s.i])
}

// recoverPanic turns a panic on the forwarding goroutine into the stream's
// last value.
func (s *streamCall) recoverPanic(ctx context.Context, out chan<- any) {
	v := recover()
	if s.c.Settled {
		return
	}
	pe := core.NewPanicError(v)
	s.c.fail(pe)
	core.Send(ctx, out, pe)
}

package retry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/steadfast-go/steadfast/core"
)

// Stream calls the inner Runnable's Stream and retries until the stream
// commits: its first chunk is delivered to the consumer.
//
// Before the commit, a failed creation (the inner Stream returning an error),
// an error value arriving before the first chunk, and an attempt that yields
// nothing within FirstChunkTimeout are retried with the same policy and
// backoff as Invoke; each abandoned attempt's stream is cancelled, with a
// cause matching ErrAttemptAbandoned, before the next attempt starts. After
// the commit nothing is retried and no chunk is ever delivered twice: an
// error value is passed on as the last value.
//
// Stream returns the *Error when creation retries run out. When retries run
// out after a creation succeeded, the *Error is the only value on the
// channel. One goroutine forwards the chunks; it ends when the stream ends
// or ctx is done. A consumer that stops reading early must cancel ctx.
//
// The first creation runs on the caller's goroutine; later ones, with the
// hooks, the budget and the logger they call, run on the forwarding
// goroutine. A panic there is recovered and delivered as the last value: an
// *Error wrapping a *core.PanicError.
func (r *RetryRunnable) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	s := &streamCall{input: input, opts: opts}
	ctx = r.begin(ctx, &s.c, methodStream, opts)
	if e := s.start(ctx); e != nil {
		return nil, e
	}
	out := make(chan any)
	go s.forward(ctx, out)
	return out, nil
}

// streamCall is the state of one Stream call.
type streamCall struct {
	c      call
	input  any
	opts   []core.Option
	n      int                     // attempts made
	cur    attempt                 // the live attempt, once created
	cancel context.CancelCauseFunc // cancels the live attempt's stream
	ch     <-chan any              // the live attempt's stream
	last   error                   // the last failed attempt's error
	chunks int                     // chunks delivered to the consumer
}

// start makes attempts on the caller's goroutine until one creates a
// stream, and then hands the call to the forwarding goroutine.
func (s *streamCall) start(ctx context.Context) *Error {
	defer s.c.endIfUnwinding(ctx)
	if e := s.create(ctx); e != nil {
		s.c.fail(ctx, e)
		return e
	}
	s.c.settled = true // the forwarding goroutine owns the call from here
	return nil
}

// create makes attempts until one returns a stream, and returns the *Error
// that ends the call when none does.
func (s *streamCall) create(ctx context.Context) *Error {
	for {
		if e := s.c.stopped(ctx, s.n, s.last); e != nil {
			return e
		}
		s.n++
		a := s.c.startAttempt(ctx, s.n, 0)
		ch, cancel, err := s.createOnce(&a)
		if err == nil {
			s.cur, s.cancel, s.ch = a, cancel, ch
			return nil
		}
		cancel(abandoned(err))
		if e := s.failed(ctx, &a, err); e != nil {
			return e
		}
	}
}

// createOnce calls the inner Stream for attempt a, bounded by
// PerAttemptTimeout. The returned cancel stops the attempt's stream.
func (s *streamCall) createOnce(a *attempt) (ch <-chan any, cancel context.CancelCauseFunc, err error) {
	c := &s.c
	sctx, cancel := context.WithCancelCause(a.ctx)
	var timer *time.Timer
	if d := c.cfg.PerAttemptTimeout; d > 0 {
		timer = time.AfterFunc(d, func() { cancel(ErrAttemptTimeout) })
	}
	returned := false
	defer func() {
		if !returned { // the inner Stream panicked: release what it was given
			if timer != nil {
				timer.Stop()
			}
			cancel(ErrAttemptAbandoned)
		}
	}()
	ch, err = c.r.inner.Stream(sctx, s.input, s.opts...)
	returned = true
	if timer != nil && !timer.Stop() && a.ctx.Err() == nil {
		err = timedOutError(cmp.Or(err, fmt.Errorf("stream creation took longer than %v", c.cfg.PerAttemptTimeout)))
	}
	if err == nil && ch == nil {
		err = Permanent(errors.New("retry: inner Stream returned neither a channel nor an error"))
	}
	return ch, cancel, err
}

// abandoned is the cause with which an attempt's stream is cancelled when
// the retry layer gives up on it: it matches ErrAttemptAbandoned and the
// attempt's failure, so a decorator inside (a circuit breaker) tells it from
// the caller's own cancellation.
func abandoned(err error) error { return fmt.Errorf("%w: %w", ErrAttemptAbandoned, err) }

// failed ends a failed attempt and sleeps the backoff; it returns the *Error
// that ends the call when there is to be no next attempt.
func (s *streamCall) failed(ctx context.Context, a *attempt, err error) *Error {
	s.last = err
	return s.c.retryOrStop(ctx, a, err)
}

// forward runs on the stream's goroutine: it awaits the first chunk,
// retrying until the stream commits, then pumps every chunk until the
// stream ends or ctx is done.
func (s *streamCall) forward(ctx context.Context, out chan<- any) {
	s.c.settled = false // this goroutine owns the call now
	defer close(out)
	defer func() { s.cancel(nil) }() // the live attempt's, whichever it is by then
	defer s.recoverPanic(ctx, out)
	if s.awaitFirst(ctx, out) {
		s.pump(ctx, out)
	}
}

// awaitFirst is the phase before the commit: it waits for the live
// attempt's first value, retrying failures, and delivers the first chunk.
// It reports whether the stream committed; when not, the call has ended.
func (s *streamCall) awaitFirst(ctx context.Context, out chan<- any) bool {
	for {
		v, got, err := s.first(ctx)
		switch got {
		case gotEnd:
			s.succeed(ctx)
			return false
		case gotDone:
			s.abort(ctx)
			return false
		case gotFailure:
			s.cancel(abandoned(err))
			e := s.failed(ctx, &s.cur, err)
			if e == nil {
				e = s.create(ctx)
			}
			if e != nil {
				core.Send(ctx, out, e)
				s.c.fail(ctx, e, AttrStreamChunks.Int(0))
				return false
			}
			continue
		}
		if !core.Send(ctx, out, v) {
			s.abort(ctx)
			return false
		}
		s.commit(ctx)
		return true
	}
}

// commit marks the stream committed: from here on nothing is retried.
func (s *streamCall) commit(ctx context.Context) {
	s.chunks = 1
	s.c.recordSuccess(ctx, s.n)
}

// pump is the phase after the commit: it forwards every value until the
// stream ends, fails or ctx is done.
func (s *streamCall) pump(ctx context.Context, out chan<- any) {
	for {
		select {
		case v, ok := <-s.ch:
			if !ok {
				if ctx.Err() != nil { // closed because the caller's context ended
					s.abort(ctx)
					return
				}
				s.succeed(ctx)
				return
			}
			if err, isErr := v.(error); isErr {
				core.Send(ctx, out, err)
				s.committedFailure(ctx, err)
				return
			}
			if !core.Send(ctx, out, v) {
				s.abort(ctx)
				return
			}
			s.chunks++
		case <-ctx.Done():
			s.abort(ctx)
			return
		}
	}
}

// recoverPanic, deferred by forward, turns a panic on the forwarding
// goroutine (of the inner Stream, a hook, the budget or the logger) into
// the stream's last value. A panic after the last value was delivered
// cannot be delivered and is dropped: nothing may follow the last value.
func (s *streamCall) recoverPanic(ctx context.Context, out chan<- any) {
	v := recover()
	if s.c.settled { // a normal return, or a panic after the call ended
		return
	}
	var err error = errGoexit
	if v != nil {
		err = core.NewPanicError(v)
	}
	core.Send(ctx, out, s.c.failUnwound(ctx, err, s.chunks > 0, AttrStreamChunks.Int(s.chunks)))
}

// first waits for the live attempt's first value.
func (s *streamCall) first(ctx context.Context) (any, firstResult, error) {
	var timeout <-chan time.Time
	if d := s.c.cfg.FirstChunkTimeout; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case v, ok := <-s.ch:
		if !ok {
			if ctx.Err() != nil { // closed because the caller's context ended
				return nil, gotDone, nil
			}
			return nil, gotEnd, nil
		}
		if err, isErr := v.(error); isErr {
			return nil, gotFailure, err
		}
		return v, gotChunk, nil
	case <-timeout:
		return nil, gotFailure, &attemptTimeoutError{
			err: fmt.Errorf("no first chunk within FirstChunkTimeout %v", s.c.cfg.FirstChunkTimeout)}
	case <-ctx.Done():
		return nil, gotDone, nil
	}
}

// succeed ends a stream that closed normally.
func (s *streamCall) succeed(ctx context.Context) {
	s.c.endAttempt(ctx, &s.cur, nil, decision{})
	if s.chunks == 0 { // an empty stream: not recorded at a commit
		s.c.recordSuccess(ctx, s.n)
	}
	s.c.succeed(ctx, s.n, AttrStreamChunks.Int(s.chunks))
}

// committedFailure ends a stream that failed after its commit.
func (s *streamCall) committedFailure(ctx context.Context, err error) {
	s.c.endAttempt(ctx, &s.cur, err, decision{outcome: OutcomeCommitted})
	s.c.fail(ctx, &Error{Operation: s.c.operation, Outcome: OutcomeCommitted, Attempts: s.n, Err: err},
		AttrStreamChunks.Int(s.chunks))
}

// abort ends a stream whose caller's context ended.
func (s *streamCall) abort(ctx context.Context) {
	outcome := ctxOutcome(ctx.Err())
	s.c.endAttempt(ctx, &s.cur, ctx.Err(), decision{outcome: outcome})
	s.c.fail(ctx, s.c.newError(outcome, s.n, s.last), AttrStreamChunks.Int(s.chunks))
}

package retry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/panics"
	"github.com/steadfast-go/steadfast/internal/route"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/internal/usage"
)

// Stream calls the inner Runnable's Stream and retries until the stream
// commits: its first chunk is delivered to the consumer.
//
// Before the commit, a failed creation (the inner Stream returning an error),
// an error value arriving before the first chunk, and an attempt that yields
// nothing within FirstChunkTimeout are retried with the same policy and
// backoff as Invoke; each abandoned attempt's stream is cancelled, with a
// cause matching errAttemptAbandoned, before the next attempt starts. After
// the commit no chunk is ever delivered twice. A stream that yields nothing
// within ChunkTimeout after a chunk has stalled: it is cancelled with the
// cause ErrStreamStalled. An error value or a stall after the commit is the
// last value, unless ResumeStreams is set and the inner Runnable can resume
// (core.Resumer's CanResume, asked when the RetryRunnable is built and
// again for the call when its stream breaks): the
// failure is then classified and, when retryable, resumed after the
// backoff, after the last chunk delivered; when resuming gives up, the
// *Error (outcome committed) is the last value. Over a chain that cannot
// resume, a failure after the commit ends the stream at once: no backoff,
// no budget, no attempt.
//
// Stream returns the *Error when creation retries run out. When retries run
// out after a creation succeeded, the *Error is the only value on the
// channel. One goroutine forwards the chunks; it ends when the stream ends
// or ctx is done. A consumer that stops reading early must cancel ctx.
//
// The first creation runs on the caller's goroutine; later attempts, with
// the hooks, the budget and the logger they call, run on the forwarding
// goroutine. A panic there is recovered and delivered as the last value: an
// *Error wrapping a *core.PanicError.
func (r *RetryRunnable) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	return r.stream(ctx, input, opts, false, func(ctx context.Context, in any) (<-chan any, error) {
		return r.inner.Stream(ctx, in, opts...)
	})
}

// Resume continues, through the retry layer, a stream of input after last,
// the last chunk its consumer received: the inner Runnable's Resume, with
// Stream's retries and commit (the resumed stream's first chunk). It
// fails, not retryable, when the inner Runnable cannot resume.
func (r *RetryRunnable) Resume(ctx context.Context, input any, last any, opts ...core.Option) (<-chan any, error) {
	resumer := r.resumer
	if resumer == nil {
		return nil, fmt.Errorf("retry: inner Runnable cannot resume: %w", streams.ErrNotResumable)
	}
	return r.stream(ctx, input, opts, true, func(ctx context.Context, in any) (<-chan any, error) {
		return resumer.Resume(ctx, in, last, opts...)
	})
}

// CanResume reports whether the inner Runnable can resume the stream of
// ctx's call.
func (r *RetryRunnable) CanResume(ctx context.Context) bool {
	return r.resumer != nil && r.resumer.CanResume(ctx)
}

// stream is Stream, with open making each attempt's stream; resume says
// open is a Resume.
func (r *RetryRunnable) stream(ctx context.Context, input any, opts []core.Option, resume bool, open func(context.Context, any) (<-chan any, error)) (<-chan any, error) {
	s := &streamCall{input: input, opts: opts, open: open, resume: resume}
	ctx = r.begin(ctx, &s.c, callspan.Stream, opts)
	if resume && s.c.cont == nil { // a Resume carries on a call made elsewhere, maybe in another process
		ctx = s.c.joinRun(ctx, true)
	}
	cfg := s.c.cfg
	if cfg.RestartStreams && streams.AcceptsResets(opts...) {
		s.restart = true
		ctx, s.tools = route.WatchToolCalls(ctx)
	}
	if e := s.start(ctx); e != nil {
		return nil, e
	}
	if cfg.ResumeStreams {
		s.resumer = r.resumer
	}
	return streams.Forward(ctx, streams.Source{C: s.ch, Cancel: s.cancel, Sent: s.cur.start}, s, streams.Config{
		FirstTimeout:      cfg.FirstChunkTimeout,
		FirstTimeoutError: s.firstChunkTimeout,
		Abandon:           abandoned,
		ChunkGap:          cfg.ChunkTimeout,
		StallError:        s.stalled,
		Resume:            s.resumer != nil || s.restart,
	}), nil
}

// streamCall is the state of one Stream call: the streams.Committer of the
// retry layer.
type streamCall struct {
	c       call
	input   any
	opts    []core.Option
	open    func(context.Context, any) (<-chan any, error) // the inner Stream, or Resume, of an input
	resume  bool                                           // open is Resume: a retry, never held as a first attempt
	resumer core.Resumer                                   // the inner Runnable, when its chain can resume and ResumeStreams is set
	restart bool                                           // RestartStreams, for a caller that accepts core.Reset
	tools   *route.ToolWatch                               // whether the stream delivered a tool call, when it may restart
	// restarting is the failure a restart of the stream is under way
	// after, until the restarted stream's first chunk is delivered.
	restarting error
	// kept are the meters of the attempts whose chunks reached the
	// consumer: what a restart voids.
	kept   []*usage.Meter
	n      int                     // attempts made
	cur    attempt                 // the live attempt, once created
	cancel context.CancelCauseFunc // cancels the live attempt's stream
	ch     <-chan any              // the live attempt's stream
	last   error                   // the last failed attempt's error
	gaveUp *Error                  // the end of a stream that resuming gave up on
	// committedAt is the attempt whose first chunk committed the stream.
	committedAt int
}

// start makes attempts on the caller's goroutine until one creates a
// stream, and then hands the call to the forwarding goroutine.
func (s *streamCall) start(ctx context.Context) *Error {
	defer s.c.endIfUnwinding(ctx)
	s.n = s.c.prior()
	if e := s.c.spent(); e != nil {
		s.c.fail(ctx, e)
		return e
	}
	if !s.resume {
		if e := s.c.admit(ctx); e != nil {
			s.c.fail(ctx, e)
			return e
		}
	}
	if e := s.create(ctx); e != nil {
		s.c.fail(ctx, e)
		return e
	}
	s.c.handedOff = true
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
		var a attempt
		s.c.startAttempt(ctx, &a, s.n, 0)
		ch, cancel, err := s.createOnce(&a, s.open, s.input)
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

// createOnce opens attempt a's stream, bounded by PerAttemptTimeout. The
// returned cancel stops the attempt's stream. A Resume that answers
// core.ErrNotResumable is not retried.
func (s *streamCall) createOnce(a *attempt, open func(context.Context, any) (<-chan any, error), input any) (ch <-chan any, cancel context.CancelCauseFunc, err error) {
	c := &s.c
	sctx, cancel := context.WithCancelCause(a.ctx)
	var timer *time.Timer
	d, first := creationBound(c.cfg)
	if d > 0 {
		timer = time.AfterFunc(d, func() { cancel(ErrAttemptTimeout) })
	}
	returned := false
	defer func() {
		if !returned { // the inner Stream panicked: release what it was given
			if timer != nil {
				timer.Stop()
			}
			cancel(errAttemptAbandoned)
		}
	}()
	if err = a.refused; err == nil {
		ch, err = open(sctx, input)
	}
	returned = true
	if timer != nil && !timer.Stop() && a.ctx.Err() == nil {
		if first {
			err = s.firstChunkTimeout() // headers or not, nothing came
		} else {
			err = timedOutError(cmp.Or(err, fmt.Errorf("stream creation took longer than %v", c.cfg.PerAttemptTimeout)))
		}
	}
	switch {
	case err == nil && ch == nil:
		err = Permanent(errors.New("retry: inner Stream returned neither a channel nor an error"))
	case errors.Is(err, streams.ErrNotResumable):
		err = Permanent(err)
	}
	return ch, cancel, err
}

// creationBound is the longest a stream's creation may take: the shorter
// of PerAttemptTimeout and FirstChunkTimeout, both counted from the
// request (a route that sends no headers is as silent as one that sends
// no chunk); first says it is FirstChunkTimeout. 0 means none.
func creationBound(cfg *RetryConfig) (d time.Duration, first bool) {
	d, f := cfg.PerAttemptTimeout, cfg.FirstChunkTimeout
	if f > 0 && (d <= 0 || f < d) {
		return f, true
	}
	return d, false
}

// abandoned is the cause with which an attempt's stream is cancelled when
// the retry layer gives up on it: it matches errAttemptAbandoned and the
// attempt's failure, so a decorator inside (a circuit breaker) tells it from
// the caller's own cancellation.
func abandoned(err error) error { return fmt.Errorf("%w: %w", errAttemptAbandoned, err) }

// firstChunkTimeout is the failure of an attempt with no first value
// within FirstChunkTimeout.
func (s *streamCall) firstChunkTimeout() error {
	return &attemptTimeoutError{err: fmt.Errorf("no first chunk within FirstChunkTimeout %v", s.c.cfg.FirstChunkTimeout)}
}

// stalled is the failure of a stream with no value within ChunkTimeout.
func (s *streamCall) stalled() error {
	return &stallError{timeout: s.c.cfg.ChunkTimeout}
}

// failed ends a failed attempt and sleeps the backoff, or repairs the
// input of a creation that failed for good; it returns the *Error
// that ends the call when there is to be no next attempt.
func (s *streamCall) failed(ctx context.Context, a *attempt, err error) *Error {
	in := &s.input
	if s.resume || s.committedAt > 0 {
		in = nil // a continuation of a call: its input is what it was
	} else {
		err = markSilent(ctx, a, err, cmp.Or(s.c.cfg.FirstChunkTimeout, s.c.cfg.PerAttemptTimeout))
	}
	s.last = err
	return s.c.retryOrStop(ctx, a, err, in)
}

// Next implements streams.Committer: the live attempt failed before the
// commit; the next one, after the backoff.
func (s *streamCall) Next(ctx context.Context, err error) (streams.Source, error) {
	e := s.failed(ctx, &s.cur, err)
	if e == nil {
		e = s.create(ctx)
	}
	if e != nil {
		return streams.Source{}, e
	}
	return streams.Source{C: s.ch, Cancel: s.cancel, Sent: s.cur.start}, nil
}

// Committed implements streams.Committer: from here on nothing is
// retried, unless resumed.
func (s *streamCall) Committed(ctx context.Context) {
	if s.c.metrics {
		s.c.firstChunk(ctx, &s.cur)
	}
	s.committedAt, s.restarting = s.n, nil
	s.keep()
	s.c.recordSuccess(ctx, s.n)
	s.c.reported = s.n // if it breaks and is resumed, it is not reported again
}

// Resume implements streams.Committer: the live attempt failed after the
// commit with err; the next attempt, after the backoff, resumes after
// last, or, when the stream cannot resume and may restart, starts it
// again. It returns the *Error that ends the stream when none may.
func (s *streamCall) Resume(ctx context.Context, err error, last any) (streams.Source, error) {
	switch {
	case s.restarting == nil && s.resumer != nil && s.resumer.CanResume(s.c.first):
		return s.resumeAfter(ctx, err, last)
	case s.restart && (!s.tools.Called() || route.SaysIdempotent(s.c.r.inner)):
		return s.restartAfter(ctx, err)
	}
	// This stream cannot resume (it committed on a candidate that cannot,
	// or its id never came) nor restart: no backoff, budget or attempt.
	return streams.Source{}, err
}

// resumeAfter makes the attempts that resume the stream after last.
func (s *streamCall) resumeAfter(ctx context.Context, err error, last any) (streams.Source, error) {
	broke := err // the failure that stopped the stream
	for {
		s.last = err
		e := s.c.retryOrStop(ctx, &s.cur, err, nil)
		if e != nil {
			if e.Err != broke && errors.Is(e.Err, streams.ErrNotResumable) {
				e.Err = errors.Join(broke, e.Err) // what broke the stream, and why it was not resumed
			}
			return streams.Source{}, s.giveUp(e)
		}
		a, ch, cancel, rerr := s.again(ctx, attrStreamResumed, func(ctx context.Context, in any) (<-chan any, error) {
			return s.resumer.Resume(ctx, in, last, s.opts...)
		})
		if rerr == nil {
			s.keep()
			return streams.Source{C: ch, Cancel: cancel, Sent: a.start}, nil
		}
		cancel(abandoned(rerr))
		s.cur, err = a, rerr // a Resume that failed is a failed attempt
	}
}

// restartAfter makes the attempts that start the stream again from its
// input after the failure err, voiding what the consumer has of it.
func (s *streamCall) restartAfter(ctx context.Context, err error) (streams.Source, error) {
	if s.restarting == nil {
		s.restarting = err
		for _, m := range s.kept {
			m.Discard()
		}
		s.kept, s.c.reported = s.kept[:0], 0 // the live attempt's tokens are discarded as it ends
	}
	for {
		s.last = err
		if e := s.c.retryOrStop(ctx, &s.cur, err, nil); e != nil {
			return streams.Source{}, s.giveUp(e)
		}
		a, ch, cancel, rerr := s.again(ctx, attrRestarted, s.open)
		if rerr == nil {
			return streams.Source{C: ch, Cancel: cancel, Restart: s.restarting, Sent: a.start}, nil
		}
		cancel(abandoned(rerr))
		s.cur, err = a, rerr
	}
}

// again starts the next attempt, marked on its span with mark, and opens
// its stream with open; it becomes the live attempt when that succeeds.
func (s *streamCall) again(ctx context.Context, mark attribute.Key, open func(context.Context, any) (<-chan any, error)) (attempt, <-chan any, context.CancelCauseFunc, error) {
	s.n++
	var a attempt
	s.c.startAttempt(ctx, &a, s.n, 0)
	if a.span != nil {
		a.span.SetAttributes(mark.Bool(true))
	}
	ch, cancel, err := s.createOnce(&a, open, s.input)
	if err == nil {
		s.cur, s.cancel, s.ch = a, cancel, ch
	}
	return a, ch, cancel, err
}

// keep remembers the live attempt as one whose chunks reach the consumer,
// for a stream that may restart.
func (s *streamCall) keep() {
	if s.restart && s.cur.meter != nil {
		s.kept = append(s.kept, s.cur.meter)
	}
}

// brokenOutcome is the outcome of a call whose stream broke after its
// first chunk with err: silent_timeout when it stalled (the route went
// quiet, whatever it had sent), else committed.
func brokenOutcome(err error) Outcome {
	if errors.Is(err, ErrStreamStalled) {
		return OutcomeSilentTimeout
	}
	return OutcomeCommitted
}

// giveUp ends resuming or restarting the stream with e, whose outcome is
// brokenOutcome's (committed, or silent_timeout after a stall) unless the
// caller's context ended it.
func (s *streamCall) giveUp(e *Error) *Error {
	if e.Outcome != OutcomeCanceled && e.Outcome != OutcomeDeadline {
		e.Outcome = brokenOutcome(e.Err)
	}
	s.gaveUp = e
	return e
}

// Ended implements streams.Committer: it ends the call.
func (s *streamCall) Ended(ctx context.Context, r streams.Result) {
	chunks := attrStreamChunks.Int(r.Chunks)
	if s.gaveUp != nil { // its last attempt ended with the decision to stop
		s.c.fail(ctx, s.gaveUp, chunks)
		return
	}
	switch r.End {
	case streams.Completed:
		s.c.endAttempt(ctx, &s.cur, nil, decision{})
		if r.Chunks == 0 || s.n > s.committedAt { // not recorded at a commit
			s.c.recordSuccess(ctx, s.n)
		}
		s.c.succeed(ctx, s.n, chunks)
	case streams.Failed:
		outcome := brokenOutcome(r.Err)
		s.c.endAttempt(ctx, &s.cur, r.Err, decision{outcome: outcome})
		s.c.fail(ctx, &Error{Operation: s.c.operation, Outcome: outcome, Attempts: s.n, Err: r.Err}, chunks)
	case streams.Canceled:
		outcome := ctxOutcome(ctx.Err())
		s.c.endAttempt(ctx, &s.cur, ctx.Err(), decision{outcome: outcome})
		s.c.fail(ctx, s.c.newError(decision{outcome: outcome}, s.n, s.last), chunks)
	case streams.GaveUp:
		s.c.fail(ctx, r.Err.(*Error), chunks)
	}
}

// Unwound implements streams.Committer: a panic on the forwarding
// goroutine ends the call with an *Error wrapping a *core.PanicError.
func (s *streamCall) Unwound(ctx context.Context, v any, chunks int) (error, bool) {
	if s.c.ended { // a normal return, or a panic after the call ended
		return nil, false
	}
	var err error = errGoexit
	if v != nil {
		err = panics.Recovered(v)
	}
	return s.c.failUnwound(ctx, err, chunks > 0, attrStreamChunks.Int(chunks)), true
}

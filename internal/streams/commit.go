package streams

import (
	"context"
	"time"

	"github.com/steadfast-go/steadfast/core"
)

// Source is an open attempt's stream and the cancel of its context.
type Source struct {
	C      <-chan any
	Cancel context.CancelCauseFunc
	// Restart, when not nil, says C starts the stream again from its
	// input after the failure Restart, rather than continue it: the
	// consumer is sent core.Reset{Cause: Restart} just before C's first
	// chunk (or its end), never before C has shown it has one.
	Restart error
	// Sent, when not zero, is when C's request was sent: FirstTimeout
	// counts from it, so a route that took its time to answer the
	// request (headers, a stream's creation) has that much less left.
	Sent time.Time
}

// Committer is the policy of a call that commits at its first chunk. Its
// methods run on the forwarding goroutine, which owns the call once
// Forward has started it.
type Committer interface {
	// Next is told the failure of the live source before the commit (an
	// error value, or no first value within FirstTimeout), after that
	// source was cancelled with Abandon(err). It returns the next source,
	// or the call's error when there is none: Forward calls Ended with
	// GaveUp, then delivers that error as the only value.
	Next(ctx context.Context, err error) (Source, error)
	// Committed is told that the first chunk reached the consumer: from
	// here on nothing is retried, unless resumed.
	Committed(ctx context.Context)
	// Resume is told, when Config.Resume is set, the failure of the live
	// source after the commit (an error value, or a stall), after that
	// source was cancelled, and the last chunk the consumer received. It
	// returns the source that continues after last, or one that starts
	// the stream again (Source.Restart), or the error that ends the
	// stream: Forward calls Ended with Failed, then delivers it as the
	// last value. A restarted source that fails before its first chunk
	// is told to Resume again (with the same last); once its first chunk
	// is delivered, Committed is told again.
	Resume(ctx context.Context, err error, last any) (Source, error)
	// Ended is told, once, how the stream ended; it records the call's
	// end. It runs before the stream's last error value is delivered, so a
	// consumer that has that value (a fallback moving on, a retry about to
	// try again) finds the call's span ended and its outcome counted.
	Ended(ctx context.Context, r Result)
	// Unwound is told of a panic on the forwarding goroutine (v, or nil
	// for runtime.Goexit) after chunks chunks were delivered. It records
	// the call's end and returns the error to deliver as the last value,
	// or false when the call had ended already: nothing may follow the
	// last value.
	Unwound(ctx context.Context, v any, chunks int) (error, bool)
}

// Config is what differs between the committers.
type Config struct {
	// FirstTimeout, when positive, bounds the wait for a source's first
	// value, from Source.Sent when it is set; past it,
	// FirstTimeoutError() is the source's failure.
	FirstTimeout      time.Duration
	FirstTimeoutError func() error
	// Abandon returns the cause with which a source that failed is
	// cancelled, so that a decorator inside tells it from the caller's own
	// cancellation.
	Abandon func(err error) error
	// ChunkGap, when positive, bounds the wait for each value after the
	// first; past it, StallError() is the source's failure, with which it
	// is cancelled.
	ChunkGap   time.Duration
	StallError func() error
	// Resume makes failures after the commit go to Committer.Resume; else
	// an error value is delivered as it comes, and a stall's error is.
	Resume bool
}

// Forward starts the goroutine that owns the call from here on and
// returns the consumer's channel. The goroutine waits for the first value
// of src, moving to p.Next's sources while they fail, delivers the first
// chunk, and then pumps the rest of that source. It ends when the stream
// ends or ctx is done, and cancels the last source's context.
func Forward(ctx context.Context, src Source, p Committer, cfg Config) <-chan any {
	out := make(chan any)
	m := &machine{src: src, p: p, cfg: cfg, out: out}
	go m.run(ctx)
	return out
}

type machine struct {
	src    Source
	p      Committer
	cfg    Config
	out    chan any
	chunks int
	last   any   // the last chunk delivered
	final  error // the last value, while Ended runs before it is delivered
}

// first is what the first receive of a source found.
type first uint8

const (
	gotChunk   first = iota // a chunk: the stream commits once it is delivered
	gotEnd                  // the stream closed without a value: an empty success
	gotFailure              // an error value or FirstTimeout: the next source
	gotDone                 // the caller's context ended
)

func (m *machine) run(ctx context.Context) {
	defer close(m.out)
	defer func() { m.src.Cancel(nil) }() // the live source's, whichever it is by then
	defer m.recover(ctx)
	for {
		v, got, err := m.first(ctx)
		switch got {
		case gotEnd:
			m.p.Ended(ctx, Result{End: Completed})
			return
		case gotDone:
			m.p.Ended(ctx, Result{End: Canceled})
			return
		case gotFailure:
			m.src.Cancel(m.cfg.Abandon(err))
			next, err := m.p.Next(ctx, err)
			if err != nil {
				m.endWith(ctx, Result{End: GaveUp, Err: err})
				return
			}
			m.src = next
			continue
		}
		if !Send(ctx, m.out, v) {
			m.p.Ended(ctx, Result{End: Canceled})
			return
		}
		m.chunks, m.last = 1, v
		m.p.Committed(ctx)
		m.pump(ctx)
		return
	}
}

// pump is the phase after the commit: it forwards the live source and,
// when it fails and Config.Resume is set, the sources that resume it, until
// the stream ends.
func (m *machine) pump(ctx context.Context) {
	cfg := PumpConfig{Gap: m.cfg.ChunkGap, HoldErrors: true, Seen: m.seen}
	for {
		r := Pump(ctx, m.src.C, m.out, cfg)
		r.Chunks = m.chunks
		var failure error
		switch {
		case r.End == Stalled:
			failure = m.cfg.StallError()
			m.src.Cancel(failure) // the producer stops; a breaker inside counts a failure
		case r.End == Failed && m.cfg.Resume:
			failure = r.Err
			m.src.Cancel(m.cfg.Abandon(failure))
		default:
			m.endWith(ctx, r)
			return
		}
		if m.cfg.Resume {
			var done bool
			if failure, done = m.resume(ctx, failure); done {
				return
			}
			if failure == nil {
				continue
			}
		}
		r.End, r.Err = Failed, failure
		m.endWith(ctx, r)
		return
	}
}

// resume asks p for the source that goes on after failure, and makes it
// the live one: it returns nil when the stream goes on, done when it
// ended, else the failure that ends it. A restart's source is live once
// its first value shows it has an answer; the consumer is then sent the
// core.Reset, before that value.
func (m *machine) resume(ctx context.Context, failure error) (_ error, done bool) {
	for {
		next, err := m.p.Resume(ctx, failure, m.last)
		if err != nil {
			return err, false
		}
		m.src = next
		if next.Restart == nil {
			return nil, false
		}
		v, got, err := m.first(ctx)
		switch got {
		case gotFailure:
			m.src.Cancel(m.cfg.Abandon(err))
			failure = err
			continue
		case gotDone:
			m.p.Ended(ctx, Result{End: Canceled, Chunks: m.chunks})
			return nil, true
		}
		if !Send(ctx, m.out, core.Reset{Cause: next.Restart}) {
			m.p.Ended(ctx, Result{End: Canceled, Chunks: m.chunks})
			return nil, true
		}
		if got == gotEnd {
			m.p.Ended(ctx, Result{End: Completed, Chunks: m.chunks})
			return nil, true
		}
		if !Send(ctx, m.out, v) {
			m.p.Ended(ctx, Result{End: Canceled, Chunks: m.chunks})
			return nil, true
		}
		m.seen(v)
		m.p.Committed(ctx)
		return nil, false
	}
}

// endWith tells p how the stream ended and then delivers its last error
// value, if it has one.
func (m *machine) endWith(ctx context.Context, r Result) {
	if r.End != Failed && r.End != GaveUp {
		m.p.Ended(ctx, r)
		return
	}
	m.final = r.Err // delivered by recover if Ended panics
	m.p.Ended(ctx, r)
	m.final = nil
	Send(ctx, m.out, r.Err)
}

// seen keeps the chunks delivered and the last of them, for a resume and
// for a panic after the commit.
func (m *machine) seen(v any) { m.chunks, m.last = m.chunks+1, v }

// first waits for the live source's first value.
func (m *machine) first(ctx context.Context) (any, first, error) {
	var timeout <-chan time.Time
	if d := m.cfg.FirstTimeout; d > 0 {
		if !m.src.Sent.IsZero() {
			d = max(d-time.Since(m.src.Sent), 0)
		}
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case v, ok := <-m.src.C:
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
		return nil, gotFailure, m.cfg.FirstTimeoutError()
	case <-ctx.Done():
		return nil, gotDone, nil
	}
}

// recover, deferred by run, turns a panic on the forwarding goroutine (of
// an inner Stream, a hook, a budget, a logger) into the stream's last
// value, unless the call had ended; then the error that ended it, if Ended
// panicked before it was delivered.
func (m *machine) recover(ctx context.Context) {
	v := recover()
	if err, ok := m.p.Unwound(ctx, v, m.chunks); ok {
		Send(ctx, m.out, err)
	} else if m.final != nil {
		Send(ctx, m.out, m.final)
	}
}

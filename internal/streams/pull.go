package streams

import "iter"

// Pulled is an SDK's iterator of events and errors (genai's, ADK's) as
// the pull-style stream llmhttp.Pump reads: Next, Current, Err, Close.
type Pulled[T any] struct {
	next func() (T, error, bool)
	stop func()
	cur  T
	err  error
}

// Pull returns seq as a Pulled stream; Close stops seq.
func Pull[T any](seq iter.Seq2[T, error]) *Pulled[T] {
	next, stop := iter.Pull2(seq)
	return &Pulled[T]{next: next, stop: stop}
}

// Next reads the next event, and reports false at the end or at the
// first error, which Err then returns.
func (p *Pulled[T]) Next() bool {
	if p.err != nil {
		return false
	}
	v, err, ok := p.next()
	switch {
	case !ok:
		return false
	case err != nil:
		p.err = err
		return false
	}
	p.cur = v
	return true
}

// Current returns the event Next read.
func (p *Pulled[T]) Current() T { return p.cur }

// Err returns the error that ended the stream, nil when none did.
func (p *Pulled[T]) Err() error { return p.err }

// Close stops the iterator.
func (p *Pulled[T]) Close() error { p.stop(); return nil }

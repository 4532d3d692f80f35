package llmhttp

import (
	"context"
	"iter"
)

// PumpSeq is Pump for an SDK whose stream is an iterator of events and
// errors (genai's GenerateContentStream, ADK's GenerateContent, Genkit's
// streaming model): the iterator is pulled one event at a time and stopped
// when the stream ends or ctx is done. An error from the iterator ends the
// stream as Err would.
func PumpSeq[T any](ctx context.Context, seq iter.Seq2[T, error], c PumpConfig[T]) <-chan any {
	next, stop := iter.Pull2(seq)
	return Pump(ctx, &pulled[T]{next: next, stop: stop}, c)
}

// pulled is an iterator of events and errors as an SDKStream.
type pulled[T any] struct {
	next func() (T, error, bool)
	stop func()
	cur  T
	err  error
}

func (p *pulled[T]) Next() bool {
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

func (p *pulled[T]) Current() T   { return p.cur }
func (p *pulled[T]) Err() error   { return p.err }
func (p *pulled[T]) Close() error { p.stop(); return nil }

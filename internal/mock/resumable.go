package mock

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/streams"
)

// FaultKind is how a Resumable's stream breaks.
type FaultKind uint8

const (
	// Stall stops sending and waits for the context to end, as a provider
	// that hangs after a token does.
	Stall FaultKind = iota + 1
	// Drop ends the stream with io.ErrUnexpectedEOF, as a Runnable that
	// can tell its connection closed mid-answer does.
	Drop
	// ErrorValue ends the stream with Fault.Err as its error value.
	ErrorValue
)

// Fault breaks a stream after its chunk number After (0: before the
// first). Each fault of an input breaks one stream of that input once:
// a Resume goes past it.
type Fault struct {
	After int
	Kind  FaultKind
	Err   error // for ErrorValue
}

// Resumable is a core.Resumer whose streams yield the chunks 1 to N, the
// ints, with ChunkDelay before each but the first, and break as the faults
// of their input say. Resume continues after the chunk it is given, so a
// test can check that none is repeated or lost. Invoke returns N. It is
// safe for concurrent use.
type Resumable struct {
	n          int
	chunkDelay time.Duration
	faults     func(input any) []Fault

	mu      sync.Mutex
	fired   map[any][]bool // per input, which of its faults broke a stream
	streams int
	resumes int
}

// NewResumable returns a Resumable of n chunks; faults, when not nil, gives
// each input's faults.
func NewResumable(n int, chunkDelay time.Duration, faults func(input any) []Fault) *Resumable {
	return &Resumable{n: n, chunkDelay: chunkDelay, faults: faults, fired: make(map[any][]bool)}
}

// Counts returns how many streams were opened by Stream and by Resume.
func (r *Resumable) Counts() (streams, resumes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.streams, r.resumes
}

// Invoke returns N.
func (r *Resumable) Invoke(context.Context, any, ...core.Option) (any, error) { return r.n, nil }

// Batch returns N for every input.
func (r *Resumable) Batch(_ context.Context, inputs []any, _ ...core.Option) ([]any, error) {
	outs := make([]any, len(inputs))
	for i := range outs {
		outs[i] = r.n
	}
	return outs, nil
}

// Stream streams the chunks from 1.
func (r *Resumable) Stream(ctx context.Context, input any, _ ...core.Option) (<-chan any, error) {
	r.mu.Lock()
	r.streams++
	r.mu.Unlock()
	return r.from(ctx, input, 1), nil
}

// Resume streams the chunks after last, an int chunk of this Resumable.
func (r *Resumable) Resume(ctx context.Context, input any, last any, _ ...core.Option) (<-chan any, error) {
	n, ok := last.(int)
	if !ok || n < 1 || n > r.n {
		return nil, fmt.Errorf("mock: cannot resume after %v: %w", last, streams.ErrNotResumable)
	}
	r.mu.Lock()
	r.resumes++
	r.mu.Unlock()
	return r.from(ctx, input, n+1), nil
}

// CanResume reports true: every stream of it resumes.
func (r *Resumable) CanResume(context.Context) bool { return true }

// fault returns the fault of input due after chunk i that has not broken a
// stream yet, and marks it as having done so.
func (r *Resumable) fault(input any, i int) (Fault, bool) {
	if r.faults == nil {
		return Fault{}, false
	}
	faults := r.faults(input)
	r.mu.Lock()
	defer r.mu.Unlock()
	fired := r.fired[input]
	if fired == nil {
		fired = make([]bool, len(faults))
		r.fired[input] = fired
	}
	for k, f := range faults {
		if f.After == i && !fired[k] {
			fired[k] = true
			return f, true
		}
	}
	return Fault{}, false
}

// from streams the chunks from start on a goroutine that ends when the
// stream ends or ctx is done.
func (r *Resumable) from(ctx context.Context, input any, start int) <-chan any {
	ch := make(chan any)
	go func() {
		defer close(ch)
		if r.broke(ctx, ch, input, start-1) {
			return
		}
		for i := start; i <= r.n; i++ {
			if i > start && wait(ctx, r.chunkDelay) != nil {
				return
			}
			if !streams.Send(ctx, ch, i) || r.broke(ctx, ch, input, i) {
				return
			}
		}
	}()
	return ch
}

// broke applies input's fault after chunk i, if any, and reports whether
// the stream ended.
func (r *Resumable) broke(ctx context.Context, ch chan<- any, input any, i int) bool {
	f, ok := r.fault(input, i)
	if !ok {
		return false
	}
	switch f.Kind {
	case Stall:
		<-ctx.Done()
	case Drop:
		streams.Send(ctx, ch, io.ErrUnexpectedEOF)
	case ErrorValue:
		streams.Send(ctx, ch, f.Err)
	}
	return true
}

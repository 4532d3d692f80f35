// Package mock provides scripted Runnables for tests and examples: they fail
// with the errors they are given, then return the values they are given,
// stream the chunks they are given, and record every call. They are safe for
// concurrent use.
package mock

import (
	"context"
	"sync"
	"time"

	"github.com/steadfast-go/steadfast/core"
)

// Result is one scripted answer.
type Result struct {
	// Value is Invoke's output (and a Batch item's).
	Value any
	// Err is Invoke's error; for Stream, the creation error.
	Err error
	// Chunks are what Stream yields, in order.
	Chunks []any
	// StreamErr, when set, is sent after Chunks as the stream's error value.
	StreamErr error
	// Delay is waited, or the context's end, before answering (Invoke) or
	// before the first chunk (Stream).
	Delay time.Duration
	// ChunkDelay is waited before each chunk after the first.
	ChunkDelay time.Duration
}

// OK returns a Result whose output is v.
func OK(v any) Result { return Result{Value: v} }

// Fail returns a Result that fails with err.
func Fail(err error) Result { return Result{Err: err} }

// Stream returns a Result that streams chunks and then, when err is not nil,
// the error value err.
func Stream(err error, chunks ...any) Result { return Result{Chunks: chunks, StreamErr: err} }

// Call records one call of a Runnable.
type Call struct {
	Method string // "invoke", "batch" or "stream"
	Input  any    // Invoke and Stream
	Inputs []any  // Batch
	Opts   []core.Option
	// Ctx is the context the call received, for AttemptFromContext and
	// span checks in tests.
	Ctx context.Context
}

// Runnable is a scripted core.Runnable. Each Invoke and Stream takes the
// next Result of the script; once the script is used up its last Result
// repeats; an empty script echoes the input. Batch answers each item from
// the item's own script (ForInput) when it has one, else from the shared
// script, in input order.
type Runnable struct {
	mu         sync.Mutex
	shared     cursor
	perInput   map[any]*cursor
	batchFails []error
	calls      []Call
}

type cursor struct {
	script []Result
	next   int
}

func (c *cursor) take() (Result, bool) {
	if len(c.script) == 0 {
		return Result{}, false
	}
	i := min(c.next, len(c.script)-1)
	c.next++
	return c.script[i], true
}

// New returns a Runnable that answers with script.
func New(script ...Result) *Runnable {
	return &Runnable{shared: cursor{script: script}}
}

// ForInput gives input its own script, used by Batch for that item.
func (r *Runnable) ForInput(input any, script ...Result) *Runnable {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.perInput == nil {
		r.perInput = make(map[any]*cursor)
	}
	r.perInput[input] = &cursor{script: script}
	return r
}

// FailBatch makes the next len(errs) Batch calls fail as a whole, with errs
// in order, before any item is answered.
func (r *Runnable) FailBatch(errs ...error) *Runnable {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batchFails = append(r.batchFails, errs...)
	return r
}

// Calls returns the calls made so far, in order.
func (r *Runnable) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}

// CallCount returns the number of calls made so far.
func (r *Runnable) CallCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

func (r *Runnable) take(c Call) Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	res, ok := r.shared.take()
	if !ok {
		return Result{Value: c.Input}
	}
	return res
}

// Invoke answers with the next Result.
func (r *Runnable) Invoke(ctx context.Context, input any, opts ...core.Option) (any, error) {
	res := r.take(Call{Method: "invoke", Input: input, Opts: opts, Ctx: ctx})
	if err := wait(ctx, res.Delay); err != nil {
		return nil, err
	}
	return res.Value, res.Err
}

// Batch answers each item in input order; see Runnable.
func (r *Runnable) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	r.mu.Lock()
	r.calls = append(r.calls, Call{Method: "batch", Inputs: append([]any(nil), inputs...), Opts: opts, Ctx: ctx})
	if len(r.batchFails) > 0 {
		err := r.batchFails[0]
		r.batchFails = r.batchFails[1:]
		r.mu.Unlock()
		return nil, err
	}
	results := make([]Result, len(inputs))
	for i, in := range inputs {
		var res Result
		ok := false
		if c := r.perInput[in]; c != nil {
			res, ok = c.take()
		}
		if !ok {
			if res, ok = r.shared.take(); !ok {
				res = Result{Value: in}
			}
		}
		results[i] = res
	}
	r.mu.Unlock()

	outs := make([]any, len(inputs))
	errs := make([]error, len(inputs))
	failed := false
	for i, res := range results {
		if err := wait(ctx, res.Delay); err != nil {
			return nil, err
		}
		outs[i], errs[i] = res.Value, res.Err
		failed = failed || res.Err != nil
	}
	if failed {
		return outs, &core.BatchError{Errs: errs}
	}
	return outs, nil
}

// Stream answers with the next Result: its Err fails creation; else a
// goroutine sends its Chunks, then its StreamErr if set, and closes the
// channel. The goroutine stops when ctx is done.
func (r *Runnable) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	res := r.take(Call{Method: "stream", Input: input, Opts: opts, Ctx: ctx})
	if res.Err != nil {
		return nil, res.Err
	}
	ch := make(chan any)
	go func() {
		defer close(ch)
		if wait(ctx, res.Delay) != nil {
			return
		}
		for i, c := range res.Chunks {
			if i > 0 && wait(ctx, res.ChunkDelay) != nil {
				return
			}
			select {
			case ch <- c:
			case <-ctx.Done():
				return
			}
		}
		if res.StreamErr != nil {
			select {
			case ch <- res.StreamErr:
			case <-ctx.Done():
			}
		}
	}()
	return ch, nil
}

func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Drain reads ch to its end and returns every value, in order.
func Drain(ch <-chan any) []any {
	var got []any
	for v := range ch {
		got = append(got, v)
	}
	return got
}

package core

import (
	"context"
	"sync"
)

// RunnableFunc adapts a function to a Runnable. Invoke calls the function;
// Batch calls it once per input, concurrently, bounded by WithMaxConcurrency;
// Stream yields one chunk, the function's result or its error.
type RunnableFunc func(ctx context.Context, input any, opts ...Option) (any, error)

// Invoke calls f.
func (f RunnableFunc) Invoke(ctx context.Context, input any, opts ...Option) (any, error) {
	return f(ctx, input, opts...)
}

// Batch calls f once per input, at most maxConcurrencyFrom(opts) at a time
// (all at once when unset). It returns when every call has returned. When
// some items fail, it returns the outputs (nil at failed indexes) and a
// *BatchError. Each item runs on a goroutine of its own: an item whose f
// panics fails with a *PanicError, and the other items keep their results.
func (f RunnableFunc) Batch(ctx context.Context, inputs []any, opts ...Option) ([]any, error) {
	outs := make([]any, len(inputs))
	errs := make([]error, len(inputs))
	limit := maxConcurrencyFrom(opts)
	if limit == 0 || limit > len(inputs) {
		limit = len(inputs)
	}
	sem := make(chan struct{}, max(limit, 1))
	item, _ := ctx.Value(itemKey).(func(context.Context, int) context.Context)
	var wg sync.WaitGroup
	for i, in := range inputs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			defer func() {
				if v := recover(); v != nil {
					errs[i] = newPanicError(v)
				}
			}()
			ictx := ctx
			if item != nil {
				ictx = item(ctx, i)
			}
			outs[i], errs[i] = f(ictx, in, opts...)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return outs, &BatchError{Errs: errs}
		}
	}
	return outs, nil
}

// itemKey is the context key of a Batch's item contexts: its value, a
// func(ctx context.Context, i int) context.Context set by a decorator
// above (the retry layer), returns the context to call input i with; nil
// hides an outer Batch's. The retry layer finds it by asking an empty
// Batch of a RunnableFunc for it, once.
var itemKey = &contextKey{"batch item"}

// Stream returns a channel that yields f's result, or its error, as a single
// value and is then closed. f runs in a goroutine that ends when the value is
// delivered or ctx is done; if f panics there, the value is a *PanicError.
func (f RunnableFunc) Stream(ctx context.Context, input any, opts ...Option) (<-chan any, error) {
	ch := make(chan any)
	go func() {
		defer close(ch)
		v := f.result(ctx, input, opts)
		select {
		case ch <- v:
		case <-ctx.Done():
		}
	}()
	return ch, nil
}

// result calls f and returns its output, its error, or a *PanicError.
func (f RunnableFunc) result(ctx context.Context, input any, opts []Option) (v any) {
	defer func() {
		if p := recover(); p != nil {
			v = newPanicError(p)
		}
	}()
	out, err := f(ctx, input, opts...)
	if err != nil {
		return err
	}
	return out
}

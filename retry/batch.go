package retry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/steadfast-go/steadfast/core"
)

// Batch calls the inner Runnable's Batch and re-sends only what failed.
//
// When the inner Batch reports a *core.BatchError, the failed items whose
// errors are retryable are sent again, in their original order, after one
// backoff for the round; their results are merged back by index, and items
// that succeeded are never sent again. Any other error is classified like an
// Invoke error and the whole pending batch is sent again. Each item counts
// its own attempts. Each failed item is charged to the budget and asks it
// for its retry on its own; a whole-batch failure, being one failed call,
// is charged and asks once.
//
// The outputs are always aligned with inputs. If any item finally failed,
// the error is a *core.BatchError whose failed entries are *Error. An inner
// Batch that answers with the wrong number of outputs or errors is a bug
// that no retry fixes: its pending items fail as not_retryable.
func (r *RetryRunnable) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	b := batchCall{
		inputs:  inputs,
		opts:    opts,
		outs:    make([]any, len(inputs)),
		errs:    make([]error, len(inputs)),
		pending: make([]int, len(inputs)),
	}
	ctx = r.begin(ctx, &b.c, methodBatch, opts)
	defer b.c.endIfUnwinding(ctx)
	for i := range b.pending {
		b.pending[i] = i
	}
	rounds := 0
	for len(b.pending) > 0 {
		if e := b.c.stopped(ctx, rounds, nil); e != nil {
			b.finish(b.pending, e.Outcome, rounds)
			break
		}
		rounds++
		b.round(ctx, rounds)
	}
	return b.result(ctx, rounds)
}

// batchCall is the state of one Batch call.
type batchCall struct {
	c       call
	inputs  []any
	opts    []core.Option
	outs    []any
	errs    []error // final errors, *Error entries
	last    []error // the last attempt's error of each failed item, by index
	pending []int   // indexes still to send, in order
	// rewritten holds the items' inputs once NextInput has rewritten one;
	// nil until then, the caller's inputs being never modified.
	rewritten []any
}

// input returns item idx's input for its next attempt.
func (b *batchCall) input(idx int) any {
	if b.rewritten != nil {
		return b.rewritten[idx]
	}
	return b.inputs[idx]
}

// round sends the pending items once and leaves in b.pending those to send
// again, after sleeping the round's backoff.
func (b *batchCall) round(ctx context.Context, n int) {
	sent := b.pending
	a, outs, err := b.send(ctx, n)
	itemErrs, whole, bad := b.itemErrors(sent, outs, err)
	if bad != nil { // a malformed answer: nothing to retry
		b.c.endAttempt(ctx, &a, bad, decision{outcome: OutcomeNotRetryable})
		for _, idx := range sent {
			b.setLast(idx, bad)
		}
		b.finish(sent, OutcomeNotRetryable, n)
		b.pending = nil
		return
	}
	again, hint, roundErr := b.sort(ctx, n, outs, itemErrs, whole)
	b.pending = b.next(ctx, &a, n, again, hint, roundErr, whole)
}

// send makes round n's attempt: the inner Batch of the pending items, each
// round given a fresh slice of the caller's original values, so an inner
// Batch that writes to its inputs changes neither the caller's slice nor
// what a later round re-sends.
func (b *batchCall) send(ctx context.Context, n int) (attempt, []any, error) {
	c := &b.c
	sub := make([]any, len(b.pending))
	for i, idx := range b.pending {
		sub[i] = b.input(idx)
	}
	a := c.startAttempt(ctx, n, c.cfg.PerAttemptTimeout)
	if a.span != nil {
		a.span.SetAttributes(AttrBatchItems.Int(len(sub)))
	}
	outs, err := c.r.inner.Batch(a.ctx, sub, b.opts...)
	return a, outs, a.result(ctx, err)
}

// sort merges the round's successes and decides each failure (once for a
// whole-batch failure: it is one failed call). It returns the items that
// may be sent again, the longest server hint among them, and the first
// failure of the round.
func (b *batchCall) sort(ctx context.Context, n int, outs []any, itemErrs []error, whole bool) (again []int, hint time.Duration, roundErr error) {
	var wholeVerdict decision
	if whole {
		wholeVerdict = b.c.verdict(ctx, n, itemErrs[0])
	}
	for i, idx := range b.pending {
		ierr := itemErrs[i]
		if ierr == nil {
			if ierr = b.c.check(ctx, b.input(idx), outs[i]); ierr == nil {
				b.outs[idx] = outs[i]
				b.c.recordSuccess(ctx, n)
				continue
			}
		}
		b.setLast(idx, ierr)
		roundErr = cmp.Or(roundErr, ierr)
		d := wholeVerdict
		if !whole {
			d = b.c.verdict(ctx, n, ierr)
		}
		if d.outcome != "" {
			b.finish([]int{idx}, d.outcome, n)
			continue
		}
		hint = max(hint, d.delay)
		again = append(again, idx)
	}
	return again, hint, roundErr
}

// rewrite sets item idx's next input with NextInput, if any.
func (b *batchCall) rewrite(ctx context.Context, idx int, err error) {
	if b.c.cfg.NextInput == nil {
		return
	}
	if b.rewritten == nil {
		b.rewritten = slices.Clone(b.inputs)
	}
	b.rewritten[idx] = b.c.cfg.NextInput(ctx, b.rewritten[idx], err)
}

// next ends round n's attempt a and returns the items to send again after
// the round's backoff, ending those that may not be: the round's delay is
// scheduled once, then the budget is asked for each item's retry (once
// for a whole-batch failure).
func (b *batchCall) next(ctx context.Context, a *attempt, n int, again []int, hint time.Duration, roundErr error, whole bool) []int {
	c := &b.c
	switch {
	case roundErr == nil:
		c.endAttempt(ctx, a, nil, decision{})
		return nil
	case len(again) == 0:
		c.endAttempt(ctx, a, roundErr, decision{outcome: OutcomeNotRetryable})
		return nil
	}
	d := decision{retryable: true, delay: hint}
	if hint > 0 {
		d.source = sourceRetryAfter
	}
	c.schedule(ctx, n, &d)
	if d.outcome == "" {
		var wait time.Duration
		again, wait = b.allowed(ctx, again, n, whole)
		c.pace(ctx, &d, wait, len(again) > 0)
	}
	c.endAttempt(ctx, a, roundErr, d)
	if d.outcome == "" {
		d.outcome = c.sleep(ctx, n, roundErr, d, len(again))
	}
	if d.outcome != "" {
		b.finish(again, d.outcome, n)
		return nil
	}
	for _, idx := range again {
		b.rewrite(ctx, idx, b.last[idx])
	}
	return again
}

// itemErrors returns the error of each sent item, from a per-item
// *core.BatchError or a whole-batch error, or an error saying why the
// inner Batch's answer cannot be used.
func (b *batchCall) itemErrors(sent []int, outs []any, err error) (errs []error, whole bool, bad error) {
	be, isBatch := errors.AsType[*core.BatchError](err)
	switch {
	case err == nil:
		if len(outs) != len(sent) {
			return nil, false, fmt.Errorf("retry: inner Batch returned %d outputs for %d inputs", len(outs), len(sent))
		}
		return make([]error, len(sent)), false, nil
	case isBatch && be == nil:
		return nil, false, errors.New("retry: inner Batch returned a nil *core.BatchError as its error")
	case isBatch:
		if len(be.Errs) != len(sent) {
			return nil, false, fmt.Errorf("retry: inner Batch returned %d item errors for %d inputs: %w", len(be.Errs), len(sent), err)
		}
		if len(outs) != len(sent) && len(be.Failed()) != len(sent) {
			return nil, false, fmt.Errorf("retry: inner Batch returned %d outputs for %d inputs: %w", len(outs), len(sent), err)
		}
		return be.Errs, false, nil
	default:
		errs := make([]error, len(sent))
		for i := range errs {
			errs[i] = err
		}
		return errs, true, nil
	}
}

// allowed asks the budget for each item's retry, or once for all of them
// when the whole batch failed, and ends those refused. It returns the items
// kept and the longest wait a pacing budget asked for.
func (b *batchCall) allowed(ctx context.Context, items []int, n int, whole bool) ([]int, time.Duration) {
	if whole {
		wait, ok := b.c.allowRetry(ctx)
		if ok {
			return items, wait
		}
		b.finish(items, OutcomeBudgetExhausted, n)
		return nil, 0
	}
	kept := items[:0:0]
	var longest time.Duration
	for _, idx := range items {
		if rejected(b.last[idx]) { // a rejected output does not ask
			kept = append(kept, idx)
			continue
		}
		if wait, ok := b.c.allowRetry(ctx); ok {
			kept, longest = append(kept, idx), max(longest, wait)
			continue
		}
		b.finish([]int{idx}, OutcomeBudgetExhausted, n)
	}
	return kept, longest
}

func (b *batchCall) setLast(idx int, err error) {
	if b.last == nil {
		b.last = make([]error, len(b.inputs))
	}
	b.last[idx] = err
}

// finish ends the given items with outcome after attempts attempts.
func (b *batchCall) finish(items []int, outcome string, attempts int) {
	for _, idx := range items {
		var last error
		if b.last != nil {
			last = b.last[idx]
		}
		b.errs[idx] = b.c.newError(outcome, attempts, last)
	}
}

// result ends the call span and returns the outputs and, if any item
// failed, the *core.BatchError.
func (b *batchCall) result(ctx context.Context, rounds int) ([]any, error) {
	for _, err := range b.errs {
		if err == nil {
			continue
		}
		first := err.(*Error)
		be := &core.BatchError{Errs: b.errs}
		b.c.fail(ctx, &Error{
			Operation:  first.Operation,
			Outcome:    first.Outcome,
			Attempts:   rounds,
			Err:        be,
			ContextErr: first.ContextErr,
		})
		return b.outs, be
	}
	b.c.succeed(ctx, rounds)
	return b.outs, nil
}

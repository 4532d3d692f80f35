package retry

import (
	"context"
	"errors"
	"fmt"
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
		if cerr := ctx.Err(); cerr != nil {
			b.finish(ctx, b.pending, ctxOutcome(cerr), rounds)
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
}

// round sends the pending items once and leaves in b.pending those to send
// again, after sleeping the round's backoff.
func (b *batchCall) round(ctx context.Context, n int) {
	c := &b.c
	sent := b.pending
	// A fresh slice each round: an inner Batch that writes to its inputs
	// must not change what a later round re-sends, nor the caller's slice.
	sub := make([]any, len(sent))
	for i, idx := range sent {
		sub[i] = b.inputs[idx]
	}
	a := c.startAttempt(ctx, n, c.cfg.PerAttemptTimeout)
	if a.span != nil {
		a.span.SetAttributes(AttrBatchItems.Int(len(sent)))
	}
	outs, err := c.r.inner.Batch(a.ctx, sub, b.opts...)
	err = a.result(ctx, err)

	itemErrs, whole, err := b.itemErrors(sent, outs, err)
	if err != nil { // a malformed answer: nothing to retry
		b.c.endAttempt(ctx, &a, err, decision{outcome: OutcomeNotRetryable})
		for _, idx := range sent {
			b.setLast(idx, err)
		}
		b.finish(ctx, sent, OutcomeNotRetryable, n)
		b.pending = nil
		return
	}

	var again []int
	var roundErr error
	var hint time.Duration
	// A whole-batch failure is one failed call: it is classified, and
	// charged to the budget, once for all its items.
	var wholeOutcome string
	var wholeHint time.Duration
	if whole {
		b.setLast(sent[0], itemErrs[0])
		wholeOutcome, wholeHint = b.classify(ctx, n, itemErrs[0])
	}
	for i, idx := range sent {
		ierr := itemErrs[i]
		if ierr == nil {
			b.outs[idx] = outs[i]
			if c.r.budget != nil {
				c.r.budget.Record(ctx, true)
			}
			continue
		}
		b.setLast(idx, ierr)
		if roundErr == nil {
			roundErr = ierr
		}
		var outcome string
		var h time.Duration
		if whole {
			outcome, h = wholeOutcome, wholeHint
		} else {
			outcome, h = b.classify(ctx, n, ierr)
		}
		if outcome != "" {
			b.finish(ctx, []int{idx}, outcome, n)
			continue
		}
		hint = max(hint, h)
		again = append(again, idx)
	}
	if roundErr == nil {
		b.c.endAttempt(ctx, &a, nil, decision{})
		b.pending = nil
		return
	}
	if len(again) == 0 {
		b.c.endAttempt(ctx, &a, roundErr, decision{outcome: OutcomeNotRetryable})
		b.pending = nil
		return
	}

	d := decision{retryable: true, delay: hint, source: sourceRetryAfter}
	if hint == 0 {
		d.delay, d.source = c.cfg.backoff(n, c.r.random()), sourceComputed
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Add(d.delay).Before(dl) {
		d.outcome = OutcomeDeadline
	}
	if d.outcome == "" && c.r.budget != nil {
		again = b.allowed(ctx, again, n, whole)
		if len(again) == 0 {
			d.outcome = OutcomeBudgetExhausted
		}
	}
	b.c.endAttempt(ctx, &a, roundErr, d)
	if d.outcome == "" {
		d.outcome = c.sleep(ctx, n, roundErr, d, len(again))
	}
	if d.outcome != "" {
		b.finish(ctx, again, d.outcome, n)
		again = nil
	}
	b.pending = again
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

// classify decides an item's failure on round n: "" and the server's hint
// to retry it, else the outcome that ends it.
func (b *batchCall) classify(ctx context.Context, n int, err error) (string, time.Duration) {
	c := &b.c
	if cerr := ctx.Err(); cerr != nil {
		return ctxOutcome(cerr), 0
	}
	if !c.retryable(err) {
		return OutcomeNotRetryable, 0
	}
	if c.r.budget != nil {
		c.r.budget.Record(ctx, false)
	}
	if n >= c.maxAttempts {
		return OutcomeExhausted, 0
	}
	hint, ok := retryAfter(err)
	if ok && hint > c.cfg.maxRetryAfter() {
		return OutcomeRetryAfterTooLong, 0
	}
	return "", hint
}

// allowed asks the budget for each item's retry, or once for all of them
// when the whole batch failed, and ends those refused.
func (b *batchCall) allowed(ctx context.Context, items []int, n int, whole bool) []int {
	c := &b.c
	kept := items[:0:0]
	for i, idx := range items {
		if whole && i > 0 {
			if len(kept) > 0 {
				kept = append(kept, idx)
			} else {
				b.finish(ctx, []int{idx}, OutcomeBudgetExhausted, n)
			}
			continue
		}
		if c.r.budget.AllowRetry(ctx) {
			kept = append(kept, idx)
			continue
		}
		if c.metrics {
			c.r.tel.budgetRefused.Add(ctx, 1, c.attrs.attemptOK...)
		}
		b.finish(ctx, []int{idx}, OutcomeBudgetExhausted, n)
	}
	return kept
}

func (b *batchCall) setLast(idx int, err error) {
	if b.last == nil {
		b.last = make([]error, len(b.inputs))
	}
	b.last[idx] = err
}

// finish ends the given items with outcome after attempts attempts.
func (b *batchCall) finish(ctx context.Context, items []int, outcome string, attempts int) {
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

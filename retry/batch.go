package retry

import (
	"context"
	"fmt"
	"slices"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/batchcheck"
	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/usage"
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
	ctx = r.begin(ctx, &b.c, callspan.Batch, opts)
	defer b.c.endIfUnwinding(ctx)
	if len(b.c.cfg.MaxRetriesByClass) > 0 {
		b.tallies = make([]classTally, len(inputs))
	}
	if b.c.cfg.MaxRetryTokens > 0 {
		b.tokens = make([]int64, len(inputs))
	}
	for i := range b.pending {
		b.pending[i] = i
	}
	rounds := b.c.prior()
	if e := b.c.spent(); e != nil {
		b.finish(b.pending, decision{outcome: e.Outcome}, rounds)
		b.pending = nil
	} else if e := b.c.admit(ctx); e != nil {
		for _, idx := range b.pending {
			b.errs[idx] = b.c.newError(decision{outcome: e.Outcome}, 0, e.Err) // each item a Local refusal
		}
		b.pending = nil
	}
	for len(b.pending) > 0 {
		if e := b.c.stopped(ctx, rounds, nil); e != nil {
			b.finish(b.pending, decision{outcome: e.Outcome}, rounds)
			break
		}
		rounds++
		b.round(ctx, rounds)
	}
	return b.result(ctx, rounds)
}

// batchCall is the state of one Batch call: its bookkeeping (send, merge,
// finish). What follows a failed round is plan's.
type batchCall struct {
	c       call
	inputs  []any
	opts    []core.Option
	outs    []any
	errs    []error      // final errors, *Error entries
	last    []error      // the last attempt's error of each failed item, by index
	pending []int        // indexes still to send, in order
	tallies []classTally // each item's retries by class, for MaxRetriesByClass
	// rewritten holds the items' inputs once NextInput or Repair has
	// rewritten one; nil until then, the caller's inputs being never
	// modified.
	rewritten []any
	repairs   []int // each item's repairs; nil until one is repaired
	// tokens are the tokens each item has thrown away, for
	// MaxRetryTokens; nil without it.
	tokens []int64
}

// input returns item idx's input for its next attempt.
func (b *batchCall) input(idx int) any {
	if b.rewritten != nil {
		return b.rewritten[idx]
	}
	return b.inputs[idx]
}

// round sends the pending items once and leaves in b.pending those to send
// again, after sleeping the round's backoff: it sends, plans what follows
// the failures, and carries the plan out.
func (b *batchCall) round(ctx context.Context, n int) {
	a, failed, errs, whole := b.sendRound(ctx, n)
	if len(failed) == 0 {
		return
	}
	fs := b.failuresOf(failed, errs, whole)
	d := b.c.plan(ctx, n, fs)
	b.c.endAttempt(ctx, &a, errs[0], d)
	if whole { // one failure for every item, and one turn of the budget's
		b.c.tally = fs[0].tally
		fs = slices.Repeat(fs, len(failed))
		for i := 1; i < len(fs); i++ {
			fs[i].turn = core.Reservation{}
		}
	} else if b.tallies != nil {
		for i, idx := range failed {
			b.tallies[idx] = fs[i].tally
		}
	}
	b.pending = b.follow(ctx, n, failed, errs[0], d, fs)
}

// failuresOf returns a round's failures for plan: for a whole-batch
// failure one, counted in the call's tally, with the most repairs any of
// its items had and the call's thrown-away tokens; else one for each
// failed item, with the item's own (a tally only when MaxRetriesByClass
// needs one, tokens only with MaxRetryTokens).
func (b *batchCall) failuresOf(failed []int, errs []error, whole bool) []failure {
	if whole {
		f := failure{err: errs[0], tally: b.c.tally, tallied: true}
		for _, idx := range failed {
			f.repaired = max(f.repaired, b.repaired(idx))
		}
		if b.tokens != nil {
			f.discarded = b.c.discarded()
		}
		return []failure{f}
	}
	fs := make([]failure, len(failed))
	for i, idx := range failed {
		fs[i] = failure{err: errs[i], repaired: b.repaired(idx)}
		if b.tallies != nil {
			fs[i].tally, fs[i].tallied = b.tallies[idx], true
		}
		if b.tokens != nil {
			fs[i].discarded = b.tokens[idx]
		}
	}
	return fs
}

// sendRound sends the pending items once and merges what succeeded. It
// returns the round's attempt, still open unless nothing failed or the
// answer was malformed (every item then finished), the failed items and
// their errors (one error for a whole-batch failure).
func (b *batchCall) sendRound(ctx context.Context, n int) (a attempt, failed []int, errs []error, whole bool) {
	sent := b.pending
	a, outs, err := b.send(ctx, n)
	b.pending = nil
	itemErrs, whole, bad := batchcheck.Items(len(sent), outs, err)
	if a.gens != nil && bad == nil {
		b.c.endItemInferences(ctx, &a, itemErrs)
	}
	if bad != nil { // a malformed answer: nothing to retry
		bad = fmt.Errorf("retry: %w", bad)
		b.c.endAttempt(ctx, &a, bad, decision{outcome: OutcomeNotRetryable})
		for _, idx := range sent {
			b.setLast(idx, bad)
		}
		b.finish(sent, decision{outcome: OutcomeNotRetryable}, n)
		return a, nil, nil, false
	}
	failed, errs = b.merge(ctx, n, sent, outs, itemErrs, whole)
	b.settle(&a, sent, failed, whole)
	if len(failed) == 0 {
		b.c.endAttempt(ctx, &a, nil, decision{})
	}
	return a, failed, errs, whole
}

// follow carries out plan's decision d for the failed items (fs[i] is
// item failed[i]'s failure): an item that ends is offered to Repair, else
// finished; the others sleep the round's backoff and are rewritten. It
// returns the items to send again, in the caller's order.
func (b *batchCall) follow(ctx context.Context, n int, failed []int, first error, d decision, fs []failure) []int {
	var again, fixed []int
	for i, idx := range failed {
		if fs[i].end == "" {
			again = append(again, idx)
			continue
		}
		switch ok, fault := b.repair(ctx, n, idx, fs[i].end); {
		case fault != nil:
			b.setLast(idx, fault)
		case ok:
			fixed = append(fixed, idx)
			continue
		}
		b.finish([]int{idx}, decision{outcome: fs[i].end, limit: fs[i].limit, delay: d.delay}, n)
	}
	if len(again) > 0 {
		// Repaired items go at once unless others wait a backoff: then
		// with them, in the round after it.
		if outcome := b.c.sleep(ctx, n, first, d, len(again)); outcome != "" {
			giveBack(fs)
			b.finish(again, decision{outcome: outcome}, n)
			b.finish(fixed, decision{outcome: outcome}, n)
			return nil
		}
		for _, idx := range again {
			b.c.saidReask(n, b.last[idx])
			b.rewrite(ctx, idx, b.last[idx])
		}
	}
	if len(fixed) > 0 {
		b.c.repairNext = true
		again = append(again, fixed...)
		slices.Sort(again) // the caller's order
	}
	return again
}

// settle counts the tokens of round a's failed items as thrown away, each
// item's under its own meter, and, for a whole-batch failure, all of the
// round's; what the succeeded items were billed reached the caller. Round
// a's meter is then settled: endAttempt leaves it.
func (b *batchCall) settle(a *attempt, sent, failed []int, whole bool) {
	if a.meter == nil {
		return
	}
	items := a.items
	for i, j := 0, 0; i < len(sent) && j < len(failed) && items != nil; i++ {
		if sent[i] != failed[j] {
			continue
		}
		j++
		if n := items[i].Discard(); b.tokens != nil {
			b.tokens[sent[i]] += n
		}
	}
	if whole {
		a.meter.Discard()
	}
	a.meter = nil
}

// repaired is how many times item idx was repaired.
func (b *batchCall) repaired(idx int) int {
	if b.repairs == nil {
		return 0
	}
	return b.repairs[idx]
}

// repair offers item idx's permanent failure, which ended it as end after
// round n, to Repair: whether the item goes again with the changed input,
// or the fault that ends it instead.
func (b *batchCall) repair(ctx context.Context, n, idx int, end Outcome) (bool, error) {
	err := b.last[idx]
	if !b.c.repairable(end, err, b.repaired(idx)) {
		return false, nil
	}
	next, fault := b.c.repair(ctx, n, b.input(idx), err)
	if next == nil {
		return false, fault
	}
	if b.rewritten == nil {
		b.rewritten = slices.Clone(b.inputs)
	}
	if b.repairs == nil {
		b.repairs = make([]int, len(b.inputs))
	}
	b.rewritten[idx] = next
	b.repairs[idx]++
	return true, nil
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
	var a attempt
	c.startAttempt(ctx, &a, n, c.cfg.PerAttemptTimeout)
	if a.span != nil {
		a.span.SetAttributes(attrBatchItems.Int(len(sub)))
	}
	if c.run != nil {
		if c.takeRun(&a, len(sub)); a.refused != nil {
			return a, nil, a.refused
		}
	}
	if a.meter != nil { // each item's tokens under its own meter
		a.items = make(usage.Items, len(sub))
		for i := range a.items {
			a.items[i] = usage.New(a.meter)
		}
		a.ctx = context.WithValue(a.ctx, itemKey, a.items.Item)
	}
	if c.r.tel.genAI != nil {
		c.itemInferences(&a, len(sub))
	}
	outs, err := c.r.inner.Batch(a.ctx, sub, b.opts...)
	return a, outs, a.result(ctx, err)
}

// merge keeps the outputs of the sent items that succeeded and passed
// CheckOutput, and returns the items that failed with their errors: one
// error for a whole-batch failure, else one per failed item.
func (b *batchCall) merge(ctx context.Context, n int, sent []int, outs []any, itemErrs []error, whole bool) (failed []int, errs []error) {
	for i, idx := range sent {
		err := itemErrs[i]
		if err == nil {
			var out any
			if out, err = b.c.checked(ctx, n, b.input(idx), outs[i]); err == nil {
				b.outs[idx] = out
				b.c.recordSuccess(ctx, n)
				continue
			}
		}
		b.setLast(idx, err)
		failed = append(failed, idx)
		if !whole || len(errs) == 0 {
			errs = append(errs, err)
		}
	}
	return failed, errs
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

func (b *batchCall) setLast(idx int, err error) {
	if b.last == nil {
		b.last = make([]error, len(b.inputs))
	}
	b.last[idx] = err
}

// finish ends the given items as d says after attempts attempts.
func (b *batchCall) finish(items []int, d decision, attempts int) {
	for _, idx := range items {
		var last error
		if b.last != nil {
			last = b.last[idx]
		}
		b.errs[idx] = b.c.newError(d, attempts, last)
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

package fallback

import (
	"context"
	"fmt"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/batchcheck"
	"github.com/steadfast-go/steadfast/internal/callspan"
)

// Batch sends the batch to the first candidate, then only the items that
// failed with a failure that allows it to the next, and so on; results are
// merged by index. Items that finally failed have a *Error in the
// returned *core.BatchError.
func (r *Runnable) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	ctx, c := r.tel.begin(ctx, callspan.Batch)
	defer c.EndIfUnwinding()
	b := batchCall{r: r, outs: make([]any, len(inputs)), fails: make([][]error, len(inputs))}
	pending := make([]int, len(inputs))
	for i := range pending {
		pending[i] = i
	}
	last := 0
	for i := 0; len(pending) > 0; i++ {
		last = i
		again := b.send(ctx, i, inputs, pending, opts)
		if len(again) == 0 {
			break
		}
		c.switched(ctx, i, r.names, b.fails[again[0]][i])
		pending = again
	}
	if be := b.result(); be != nil {
		c.fail(be)
		return b.outs, be
	}
	c.succeed(last, r.names[last])
	return b.outs, nil
}

// batchCall holds a Batch's results and each item's failures so far.
type batchCall struct {
	r     *Runnable
	outs  []any
	fails [][]error // the failure of each candidate tried, per item
	final []error   // *Error of the items that finally failed
}

// send sends the pending items to candidate i, merges its successes, and
// returns the items to send to the next candidate.
func (b *batchCall) send(ctx context.Context, i int, inputs []any, pending []int, opts []core.Option) (again []int) {
	sub := make([]any, len(pending))
	for k, idx := range pending {
		sub[k] = b.r.inputFor(i, inputs[idx])
	}
	outs, err := b.r.candidates[i].Batch(ctx, sub, opts...)
	errs := itemErrors(i, len(sub), outs, err)
	for k, idx := range pending {
		if errs[k] == nil {
			b.outs[idx] = outs[k]
			continue
		}
		b.fails[idx] = append(b.fails[idx], errs[k])
		if b.r.next(ctx, i, errs[k]) {
			again = append(again, idx)
			continue
		}
		if b.final == nil {
			b.final = make([]error, len(b.outs))
		}
		b.final[idx] = b.r.newError(b.fails[idx])
	}
	return again
}

// result returns the *core.BatchError of the items that finally failed,
// or nil.
func (b *batchCall) result() *core.BatchError {
	if b.final == nil {
		return nil
	}
	return &core.BatchError{Errs: b.final}
}

// itemErrors returns the error of each of n items sent to candidate i:
// from its *core.BatchError, or its whole-batch error for every item. An
// answer that breaks the Batch contract is an error for every item.
func itemErrors(i, n int, outs []any, err error) []error {
	errs, _, bad := batchcheck.Items(n, outs, err)
	if bad == nil {
		return errs
	}
	errs = make([]error, n)
	for k := range errs {
		errs[k] = fmt.Errorf("fallback: candidate %d: %w", i, bad)
	}
	return errs
}

package fallback

import (
	"context"
	"fmt"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/batchcheck"
	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/run"
)

// Batch sends the batch to the first candidate, then only the items that
// failed with a failure that allows it to the next, and so on; results are
// merged by index. Items that finally failed have a *Error in the
// returned *core.BatchError.
func (r *Runnable) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	ctx, c := r.tel.begin(ctx, callspan.Batch)
	defer c.EndIfUnwinding()
	ctx, way, err := r.way(ctx)
	if err != nil {
		c.fail(err)
		return nil, err
	}
	b := batchCall{r: r, way: way, outs: make([]any, len(inputs)), fails: make([][]error, len(inputs))}
	pending := make([]int, len(inputs))
	for i := range pending {
		pending[i] = i
	}
	last := way[0]
	for k := 0; len(pending) > 0; k++ {
		last = way[k]
		again := b.send(ctx, k, inputs, pending, opts)
		if len(again) == 0 {
			break
		}
		c.switched(ctx, way[k], r.names, b.fails[again[0]][k])
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
	way   []int // the candidates, by index, in the order tried
	outs  []any
	fails [][]error // the failure of each candidate tried, per item
	final []error   // *Error of the items that finally failed
}

// send sends the pending items to the k-th candidate of the way, merges
// its successes, and returns the items to send to the next candidate.
func (b *batchCall) send(ctx context.Context, k int, inputs []any, pending []int, opts []core.Option) (again []int) {
	i := b.way[k]
	sub := make([]any, len(pending))
	for j, idx := range pending {
		sub[j] = b.r.inputFor(i, inputs[idx])
	}
	var outs []any
	bctx, ticket, err := run.Take(ctx, len(sub))
	if err == nil {
		outs, err = b.r.candidates[i].Batch(bctx, sub, opts...)
		ticket.Settle(err)
	}
	errs := itemErrors(i, len(sub), outs, err)
	for j, idx := range pending {
		if errs[j] == nil {
			b.outs[idx] = outs[j]
			continue
		}
		b.fails[idx] = append(b.fails[idx], errs[j])
		if b.r.next(ctx, k, b.way, errs[j]) {
			again = append(again, idx)
			continue
		}
		if b.final == nil {
			b.final = make([]error, len(b.outs))
		}
		b.final[idx] = b.r.newError(b.fails[idx], b.way)
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

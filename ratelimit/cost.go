package ratelimit

import (
	"context"
	"errors"

	"github.com/steadfast-go/steadfast/core"
)

// costOf is a call's estimated cost: WithCost's, or one token.
func (r *Runnable) costOf(input any) (int, error) {
	if r.cost == nil {
		return 1, nil
	}
	c := r.cost(input)
	if c < 0 {
		return 0, &costError{cost: c}
	}
	return c, nil
}

// batchCost returns each item's cost, when WithUsage will need them to
// settle, and their sum.
func (r *Runnable) batchCost(inputs []any) (costs []int, total int, err error) {
	if r.cost == nil {
		return nil, len(inputs), nil
	}
	if r.usage != nil {
		costs = make([]int, len(inputs))
	}
	for i, in := range inputs {
		c, err := r.costOf(in)
		if err != nil {
			return nil, 0, err
		}
		if costs != nil {
			costs[i] = c
		}
		total += c
	}
	return costs, total, nil
}

// settle corrects an estimate by the usage the output reported; a negative
// usage says nothing, and the estimate stands.
func (r *Runnable) settle(ctx context.Context, estimate, used int) {
	if used < 0 || used == estimate {
		return
	}
	r.b.Adjust(ctx, used-estimate)
}

// settleBatch settles the items of a Batch that succeeded, in one
// adjustment.
func (r *Runnable) settleBatch(ctx context.Context, costs []int, outs []any, err error) {
	if costs != nil && len(outs) != len(costs) {
		return // an inner Batch that broke the contract: nothing to match
	}
	var failed []error
	if err != nil {
		be, ok := errors.AsType[*core.BatchError](err)
		if !ok || be == nil || len(be.Errs) != len(outs) {
			return // the whole Batch failed
		}
		failed = be.Errs
	}
	delta, settled := 0, false
	for i, out := range outs {
		if failed != nil && failed[i] != nil {
			continue
		}
		if used := r.usage(out); used >= 0 {
			estimate := 1
			if costs != nil {
				estimate = costs[i]
			}
			delta += used - estimate
			settled = true
		}
	}
	if settled && delta != 0 {
		r.b.Adjust(ctx, delta)
	}
}

// forward passes a stream's values on, adds up the usage they report, and
// settles when the stream ends without an error. A panic of the usage
// function is the stream's last value.
func (r *Runnable) forward(ctx context.Context, estimate int, ch <-chan any, out chan<- any) {
	defer close(out)
	defer func() {
		if v := recover(); v != nil {
			core.Send(ctx, out, core.NewPanicError(v))
		}
	}()
	used, reported := 0, false
	for {
		select {
		case v, ok := <-ch:
			if !ok {
				if reported && ctx.Err() == nil {
					r.settle(ctx, estimate, used)
				}
				return
			}
			if _, isErr := v.(error); isErr {
				core.Send(ctx, out, v)
				return // the estimate stands; nothing follows an error
			}
			if u := r.usage(v); u >= 0 {
				used, reported = used+u, true
			}
			if !core.Send(ctx, out, v) {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

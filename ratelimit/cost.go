package ratelimit

import (
	"context"

	"github.com/steadfast-go/steadfast/internal/batchcheck"
	"github.com/steadfast-go/steadfast/internal/panics"
	"github.com/steadfast-go/steadfast/internal/streams"
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

// settleBatch settles the n items of a Batch that succeeded, in one
// adjustment.
func (r *Runnable) settleBatch(ctx context.Context, n int, costs []int, outs []any, err error) {
	errs, whole, bad := batchcheck.Items(n, outs, err)
	if bad != nil || whole {
		return // an answer that broke the contract, or a whole-batch failure
	}
	delta, settled := 0, false
	for i, out := range outs {
		if errs[i] != nil {
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
			streams.Send(ctx, out, panics.Recovered(v))
		}
	}()
	used, reported := 0, false
	res := streams.Pump(ctx, ch, out, streams.PumpConfig{Seen: func(v any) {
		if u := r.usage(v); u >= 0 {
			used, reported = used+u, true
		}
	}})
	if res.End == streams.Completed && reported { // else the estimate stands
		r.settle(ctx, estimate, used)
	}
}

package pool

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/batchcheck"
	"github.com/steadfast-go/steadfast/internal/panics"
	"github.com/steadfast-go/steadfast/internal/room"
	"github.com/steadfast-go/steadfast/internal/run"
)

// Batch spreads the items over the deployments, each item chosen as an
// Invoke would be (with affinity, by its own key), sends each deployment
// its items as one Batch, concurrently when there are several, and merges
// the outputs by index. Items that failed, or found every deployment
// cooling down, have their error in the returned *core.BatchError.
func (r *Runnable) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	ctx, _, err := r.planned(ctx)
	if err != nil {
		return nil, err
	}
	outs := make([]any, len(inputs))
	errs := make([]error, len(inputs))
	pending := make([]int, len(inputs))
	for i := range pending {
		pending[i] = i
	}
	// Items whose deployment died are sent to another at once, within the
	// call; each round kills at least one deployment, so it ends. Items
	// that found no deployment with room wait for their limits' reset, as
	// a call does, and are sent then.
	b := room.Bound{Max: r.maxWait} // since the items began to wait
	for len(pending) > 0 {
		idle, c := r.batchRound(ctx, pending, inputs, outs, errs, opts)
		var again []int
		for _, i := range pending {
			if _, died := errs[i].(*diedError); died {
				errs[i] = nil
				again = append(again, i)
			}
		}
		if len(idle) > 0 && len(again) == 0 { // nothing to send before the reset
			if b.Since.IsZero() {
				b.Since = c.now
			}
			if err := r.awaitReset(ctx, c, b); err != nil {
				if _, refused := err.(*UnavailableError); !refused {
					for _, i := range idle {
						errs[i] = err
					}
				}
				idle = nil // each keeps its refusal
			}
		}
		for _, i := range idle {
			errs[i] = nil
		}
		pending = append(again, idle...)
	}
	for _, err := range errs {
		if err != nil {
			return outs, &core.BatchError{Errs: errs}
		}
	}
	return outs, nil
}

// batchRound sends the items at idx, each to the deployment chosen for it,
// and merges the answers by index. It returns the items that found no
// deployment to serve them, refused, and the choice that found none.
func (r *Runnable) batchRound(ctx context.Context, idx []int, inputs, outs []any, errs []error, opts []core.Option) (idle []int, none choice) {
	p := r.planOf(ctx)
	mask := r.triedOr(ctx, p)
	groups := map[*deployment][]int{}
	var order []*deployment
	for _, i := range idx {
		in := inputs[i]
		c := r.choose(ctx, in, mask, perToken, p)
		if c.d == nil {
			errs[i] = r.unavailable(c.now, c.until)
			idle, none = append(idle, i), c
			continue
		}
		if _, ok := groups[c.d]; !ok {
			order = append(order, c.d)
		}
		groups[c.d] = append(groups[c.d], i)
	}
	send := func(d *deployment) {
		r.sendGroup(ctx, d, groups[d], inputs, outs, errs, opts)
	}
	if len(order) == 1 {
		send(order[0]) // on the caller's goroutine: a panic goes to the caller
	} else {
		var wg sync.WaitGroup
		for _, d := range order {
			wg.Go(func() {
				defer func() {
					if v := recover(); v != nil { // on a goroutine of the pool's own
						pe := panics.Recovered(v)
						for _, idx := range groups[d] {
							errs[idx] = pe
						}
					}
				}()
				send(d)
			})
		}
		wg.Wait()
	}
	return idle, none
}

// sendGroup sends the items at idx to d as one Batch and merges its
// answer; a failure of d counts once for the group.
func (r *Runnable) sendGroup(ctx context.Context, d *deployment, idx []int, inputs, outs []any, errs []error, opts []core.Option) {
	sub := make([]any, len(idx))
	for k, i := range idx {
		sub[k] = inputs[i]
	}
	ctx, ticket, err := run.Take(ctx, len(sub))
	if err != nil {
		for _, i := range idx {
			errs[i] = err
		}
		return
	}
	r.enter(ctx, d)
	defer d.inflight.Add(-1)
	got, err := d.Runnable.Batch(ctx, sub, opts...)
	ticket.Settle(err)
	itemErrs, _, bad := batchcheck.Items(len(sub), got, err)
	if bad != nil {
		bad = fmt.Errorf("pool: deployment %s: %w", d.Name, bad)
		for _, i := range idx {
			errs[i] = bad
		}
		return
	}
	counted := false
	var pe *deploymentError
	var groupErr error // the group's failure as the pool answers it
	for k, i := range idx {
		err := itemErrs[k]
		if err == nil {
			outs[i] = got[k]
			d.succeed(time.Now(), r.window)
			continue
		}
		if !counted { // the group is one call: its failure counts once
			groupErr = r.failed(ctx, d, err)
			pe, _ = groupErr.(*deploymentError)
			counted = true
		}
		switch ge := groupErr.(type) {
		case *diedError: // the deployment died: Batch sends the item elsewhere
			err = &diedError{deploymentError{deployment: d.Name, err: err, after: ge.after}}
		case *UnavailableError: // it died, and none is left
			err = ge
		default:
			if pe != nil { // the pool's hint for every item of the group
				err = &deploymentError{deployment: d.Name, err: err, after: pe.after}
			}
		}
		errs[i] = err
	}
}

package pool

import (
	"context"
	"fmt"
	"slices"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/route"
	"github.com/steadfast-go/steadfast/retry"
	routing "github.com/steadfast-go/steadfast/route"
)

// tagDeployments reads each deployment's tags and price (route.Tag in its
// chain), for the calls' constraints; it reports a price or a tag no
// router can judge by.
func (r *Runnable) tagDeployments() error {
	rs, names := make([]core.Runnable, len(r.deps)), make([]string, len(r.deps))
	for i, d := range r.deps {
		rs[i], names[i] = d.Runnable, d.Name
	}
	var bad int
	var err error
	if r.routes, r.known, r.least, bad, err = route.Candidates(rs, names); err != nil {
		return fmt.Errorf("pool: New: deployment %q: %w", names[bad], err)
	}
	return nil
}

// RouteTags returns the tags of the pool's deployments and the least of
// their prices (0 when none is known), by which a fallback judges the pool
// as a candidate of its own before asking it: the pool then chooses among
// the deployments that meet the call's constraints.
func (r *Runnable) RouteTags() ([]string, float64) { return r.known, r.least }

// plan is a call's constraints over the pool's deployments.
type plan struct {
	allowed  []bool        // by deployment index
	excluded uint64        // the same, as the bits of those not allowed
	order    []*deployment // those the call's Order names, in its order
}

// planKey is the context key of a call's plan over pool r.
type planKey struct{ r *Runnable }

// planned returns ctx carrying the call's plan over the pool, and the
// plan, when its context has route constraints (ctx as is and nil
// otherwise), or the *route.Error of a call that no deployment may serve.
// The plan rides in ctx for the failure paths (failedMask); the success
// path is handed it.
func (r *Runnable) planned(ctx context.Context) (context.Context, *plan, error) {
	ctx, p, f := route.PlanFor(ctx, r.routes, r.known, r.least > 0, false)
	switch {
	case f != nil:
		return ctx, nil, retry.Permanent(&routing.Error{Constraint: f.Constraint, Rejected: f.Rejected})
	case p == nil:
		return ctx, nil, nil
	}
	way := p.Order
	if p.NoFallback && p.Named > 0 {
		way = way[:p.Named] // only the deployments it names
	}
	pl := &plan{allowed: make([]bool, len(r.deps)), excluded: ^uint64(0)}
	for k, i := range way {
		pl.allowed[i] = true
		pl.excluded &^= bit(r.deps[i])
		if k < p.Named {
			pl.order = append(pl.order, r.deps[i])
		}
	}
	return context.WithValue(ctx, planKey{r}, pl), pl, nil
}

// planOf returns the call's plan over the pool, nil when it has none.
func (r *Runnable) planOf(ctx context.Context) *plan {
	p, _ := ctx.Value(planKey{r}).(*plan)
	return p
}

// first returns the first of p's order among ds, nil when none is.
func (p *plan) first(ds []*deployment) *deployment {
	if p == nil {
		return nil
	}
	for _, d := range p.order {
		if slices.Contains(ds, d) {
			return d
		}
	}
	return nil
}

package fallback

import (
	"context"
	"fmt"

	"github.com/steadfast-go/steadfast/internal/route"
	"github.com/steadfast-go/steadfast/retry"
	routing "github.com/steadfast-go/steadfast/route"
)

// tagCandidates reads each candidate's tags and price (route.Tag, or a
// pool's), for the calls' constraints; it reports a price or a tag no
// router can judge by.
func (r *Runnable) tagCandidates() error {
	r.all = make([]int, len(r.candidates))
	for i := range r.all {
		r.all[i] = i
	}
	routes, known, least, bad, err := route.Candidates(r.candidates, r.names)
	if err != nil {
		return fmt.Errorf("fallback: New: candidate %d (%q): %w", bad, r.names[bad], err)
	}
	r.routes, r.known, r.priced = routes, known, least > 0
	return nil
}

// way returns the candidates a call goes through, by index, in order:
// every one, in order, unless the call's context carries route
// constraints; then those that meet them (the first only, with
// NoFallback), or a *route.Error when none does.
func (r *Runnable) way(ctx context.Context) (context.Context, []int, error) {
	ctx, p, f := route.PlanFor(ctx, r.routes, r.known, r.priced, true)
	switch {
	case f != nil:
		return ctx, nil, retry.Permanent(&routing.Error{Constraint: f.Constraint, Rejected: f.Rejected})
	case p == nil:
		return ctx, r.all, nil
	case p.NoFallback:
		return ctx, p.Order[:1], nil
	}
	return ctx, p.Order, nil
}

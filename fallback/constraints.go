package fallback

import (
	"context"
	"fmt"
	"slices"

	"github.com/steadfast-go/steadfast/internal/route"
	"github.com/steadfast-go/steadfast/retry"
	routing "github.com/steadfast-go/steadfast/route"
)

// tagCandidates reads each candidate's tags and price (route.Tag, or a
// pool's), for the calls' constraints; it reports a price or a tag no
// router can judge by.
func (r *Runnable) tagCandidates() error {
	r.all = make([]int, len(r.candidates))
	for i, c := range r.candidates {
		r.all[i] = i
		tags, price, _ := route.TagsOf(c)
		if err := route.CheckTags(tags, price); err != nil {
			return fmt.Errorf("fallback: New: candidate %d (%q): %w", i, r.names[i], err)
		}
		r.routes = append(r.routes, route.Candidate{Name: r.names[i], Tags: tags, Price: price})
		for _, t := range tags {
			if !slices.Contains(r.known, t) {
				r.known = append(r.known, t)
			}
		}
		r.priced = r.priced || price > 0
	}
	slices.Sort(r.known)
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

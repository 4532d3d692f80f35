package route

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/steadfast-go/steadfast/core"
)

// ConstraintsKey is the context key under which package route (the
// public one) keeps a call's constraints, for the routers (pool,
// fallback) to read.
type ConstraintsKey struct{}

// CheckedKey marks a context whose constraints the outermost router has
// checked against every candidate under it: an inner router filters by
// them, and leaves a tag it does not know to the outer one's judgment.
type CheckedKey struct{}

// Tagged is a Runnable that says its tags and its price (dollars per
// million tokens, 0 for unknown): what route.Tag returns, and a pool (the
// tags of its deployments, the least of their prices).
type Tagged interface {
	RouteTags() (tags []string, price float64)
}

// TagsOf returns the tags and price of the first Tagged in r's chain, and
// whether there is one.
func TagsOf(r core.Runnable) ([]string, float64, bool) {
	t, ok := core.Find[Tagged](r)
	if !ok {
		return nil, 0, false
	}
	tags, price := t.RouteTags()
	return tags, price, true
}

// CheckTags reports a price or a tag that no router can judge by: a
// negative or non-finite price, an empty tag.
func CheckTags(tags []string, price float64) error {
	switch {
	case !(price >= 0) || math.IsInf(price, 1):
		return fmt.Errorf("price %v must be a finite number of dollars per million tokens, at least 0", price)
	case slices.Contains(tags, ""):
		return fmt.Errorf("tags %q hold an empty tag", tags)
	}
	return nil
}

// Reject says why a candidate with tags and price fails the filter
// (require, exclude, maxPrice), "" when it passes: the constraint, as the
// typed error names it.
func Reject(require, exclude []string, maxPrice float64, tags []string, price float64) string {
	for _, t := range require {
		if !slices.Contains(tags, t) {
			return "require " + t
		}
	}
	for _, t := range exclude {
		if slices.Contains(tags, t) {
			return "exclude " + t
		}
	}
	switch {
	case maxPrice > 0 && price == 0:
		return fmt.Sprintf("max price %v (its price is unknown)", maxPrice)
	case maxPrice > 0 && price > maxPrice:
		return fmt.Sprintf("max price %v (it costs %v)", maxPrice, price)
	}
	return ""
}

// Unknown returns the first constraint that no candidate could ever
// meet, whatever its state, given all the tags and prices known under the
// outermost router: a tag no candidate carries (a typo, most often), a
// highest price with no price known, a negative or non-finite one; "" when
// none. known holds every tag, priced whether any candidate has a price.
func Unknown(require, exclude []string, maxPrice float64, known []string, priced bool) string {
	for _, t := range slices.Concat(require, exclude) {
		if !slices.Contains(known, t) {
			return fmt.Sprintf("tag %q: no candidate carries it (known: %s)", t, strings.Join(known, ", "))
		}
	}
	switch {
	case !(maxPrice >= 0) || math.IsInf(maxPrice, 1):
		return fmt.Sprintf("max price %v: must be a finite number of dollars per million tokens, at least 0", maxPrice)
	case maxPrice > 0 && !priced:
		return fmt.Sprintf("max price %v: no candidate has a price (route.Tag)", maxPrice)
	}
	return ""
}

// Filter is a call's constraints as the routers read them (package route's
// Constraints, stored by route.With).
type Filter struct {
	Require, Exclude, Order []string
	NoFallback              bool
	MaxPrice                float64
}

// Candidate is what a router knows of one of its candidates.
type Candidate struct {
	Name  string
	Tags  []string
	Price float64
}

// Failure is why a call's constraints leave no candidate: the router
// returns it as a *route.Error.
type Failure struct {
	Constraint string
	Rejected   []string
}

// Plan is a call's way through a router's candidates.
type Plan struct {
	// Order is the indexes of the candidates that pass the filter, those
	// the call's Order names first, in its order, then the others in the
	// router's.
	Order []int
	// Named is how many of Order the call's Order named.
	Named int
	// NoFallback is the call's.
	NoFallback bool
}

// PlanFor reads the constraints of ctx and plans the call through cands:
// nil, and ctx as is, when it has none. The first router that plans the
// call checks its constraints against known (every tag under it) and
// priced (whether any candidate under it has a price), and marks the
// context it returns as checked, for the routers inside. With loose, the
// candidates' tags are what may be found under them (a pool's, all its
// deployments'), so that only a required tag none of them carries, or a
// least price above the highest, passes one over: what is excluded is for
// the candidate to judge (a pool filters its deployments, route.Tag's
// Runnable refuses a call it does not meet).
func PlanFor(ctx context.Context, cands []Candidate, known []string, priced, loose bool) (context.Context, *Plan, *Failure) {
	f, ok := ctx.Value(ConstraintsKey{}).(Filter)
	if !ok {
		return ctx, nil, nil
	}
	if ctx.Value(CheckedKey{}) == nil {
		if why := Unknown(f.Require, f.Exclude, f.MaxPrice, known, priced); why != "" {
			return ctx, nil, &Failure{Constraint: why}
		}
		ctx = context.WithValue(ctx, CheckedKey{}, true)
	}
	p := &Plan{NoFallback: f.NoFallback}
	var rejected []string
	last := ""
	pass := make([]bool, len(cands))
	exclude := f.Exclude
	if loose {
		exclude = nil
	}
	for i, c := range cands {
		if why := Reject(f.Require, exclude, f.MaxPrice, c.Tags, c.Price); why != "" {
			rejected = append(rejected, c.Name+": "+why)
			last = why
			continue
		}
		pass[i] = true
	}
	for _, name := range f.Order {
		for i, c := range cands {
			if pass[i] && c.Name == name && !slices.Contains(p.Order, i) {
				p.Order = append(p.Order, i)
			}
		}
	}
	p.Named = len(p.Order)
	for i := range cands {
		if pass[i] && !slices.Contains(p.Order, i) {
			p.Order = append(p.Order, i)
		}
	}
	if len(p.Order) == 0 {
		return ctx, nil, &Failure{Constraint: last, Rejected: rejected}
	}
	return ctx, p, nil
}

// Refusal says why a call under ctx's constraints may not go to a
// candidate with tags and price: "" when it may, or when ctx has none.
func Refusal(ctx context.Context, tags []string, price float64) string {
	f, ok := ctx.Value(ConstraintsKey{}).(Filter)
	if !ok {
		return ""
	}
	return Reject(f.Require, f.Exclude, f.MaxPrice, tags, price)
}

// Candidates reads the tags and price of each of rs (route.Tag, or a
// pool's, in its chain), named by names, for a router's New: the
// candidates, every tag among them (sorted), and the least known price (0
// when none is). It reports, by index, a price or a tag no router can
// judge by.
func Candidates(rs []core.Runnable, names []string) (cands []Candidate, known []string, least float64, bad int, err error) {
	for i, r := range rs {
		tags, price, _ := TagsOf(r)
		if err := CheckTags(tags, price); err != nil {
			return nil, nil, 0, i, err
		}
		cands = append(cands, Candidate{Name: names[i], Tags: tags, Price: price})
		for _, t := range tags {
			if !slices.Contains(known, t) {
				known = append(known, t)
			}
		}
		if price > 0 && (least == 0 || price < least) {
			least = price
		}
	}
	slices.Sort(known)
	return cands, known, least, -1, nil
}

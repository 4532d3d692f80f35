// Package route says, for one call, which candidates may serve it: the
// deployments of a pool and the candidates of a fallback carry tags
// (a region, a data-retention policy, a capability such as tools or a long
// context) and a price, and a call carries constraints in its context, as
// it carries its priority:
//
//	eu := route.Tag(euClient, 2.5, "region:eu", "zdr")
//	p, err := pool.New([]pool.Deployment{{Name: "eu", Runnable: eu}, {Name: "us", Runnable: route.Tag(usClient, 2, "region:us")}})
//	ctx = route.With(ctx, route.Constraints{Require: []string{"region:eu"}, MaxPrice: 3})
//	out, err := chain.Invoke(ctx, prompt)
//
// A pool and a fallback filter their candidates before any attempt: a
// candidate without every required tag, with an excluded one, or above the
// highest price (or with no price, when there is one) is never called,
// whatever fails meanwhile. A filter that leaves none fails the call at
// once with an *Error that names the constraint, never a provider's
// error; so does a constraint no candidate could ever meet (a tag that no
// candidate under the outermost router carries: a typo, most often; a
// highest price when no candidate has a price), so that a mistyped
// constraint is a failure rather than a silent default.
package route

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/steadfast-go/steadfast/core"
	iroute "github.com/steadfast-go/steadfast/internal/route"
	"github.com/steadfast-go/steadfast/internal/run"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/retry"
)

// Constraints are what a call asks of the candidates that serve it.
type Constraints struct {
	// Require are tags every candidate must carry.
	Require []string
	// Exclude are tags no candidate may carry.
	Exclude []string
	// Order names the candidates to try first, in this order: a pool's
	// deployments by their Name, a fallback's candidates by their
	// Runnable's name (core.NameOf). The others come after, as the router
	// would order them. A name a router does not have is passed over.
	Order []string
	// NoFallback keeps a fallback to its first candidate that passes the
	// filter (in Order when given), and a pool that is given an Order to
	// the deployments it names.
	NoFallback bool
	// MaxPrice, when positive, is the highest price a candidate may have,
	// in dollars per million tokens (as route.Tag gives it); a candidate
	// with no price is then passed over.
	MaxPrice float64
}

// With returns a context whose calls are routed under c.
func With(ctx context.Context, c Constraints) context.Context {
	f := iroute.Filter{Require: slices.Clone(c.Require), Exclude: slices.Clone(c.Exclude), Order: slices.Clone(c.Order),
		NoFallback: c.NoFallback, MaxPrice: c.MaxPrice}
	return context.WithValue(context.WithValue(ctx, iroute.CheckedKey{}, nil), iroute.ConstraintsKey{}, f)
}

// Tag returns r carrying tags and price (dollars per million tokens,
// input and output as one, 0 for unknown), for the pool or fallback it is
// a candidate of. r's name, idempotency and call attributes show through;
// so does its Resume. A pool or a fallback reports an error from New for a
// negative or non-finite price or an empty tag.
func Tag(r core.Runnable, price float64, tags ...string) core.Runnable {
	return &tagged{inner: r, tags: slices.Clone(tags), price: price}
}

// tagged is what Tag returns.
type tagged struct {
	inner core.Runnable
	tags  []string
	price float64
}

func (t *tagged) RouteTags() ([]string, float64) { return t.tags, t.price }

func (t *tagged) Unwrap() core.Runnable { return t.inner }

// refuse is the *Error of a call whose constraints t does not meet, nil
// when it does: a router passes such a candidate over, and when one asks
// it all the same (a fallback leaves what is excluded to its candidates),
// it refuses before the provider is asked.
func (t *tagged) refuse(ctx context.Context) error {
	if why := iroute.Refusal(ctx, t.tags, t.price); why != "" {
		return retry.Permanent(&Error{Constraint: why, Rejected: []string{core.NameOf(t.inner) + ": " + why}})
	}
	return nil
}

// priced returns ctx under which the tokens a run's budget counts cost
// t's price (unpriced when t has none).
func (t *tagged) priced(ctx context.Context) context.Context {
	if t.price > 0 {
		return run.WithPrice(ctx, t.price)
	}
	return ctx
}

func (t *tagged) Invoke(ctx context.Context, input any, opts ...core.Option) (any, error) {
	if err := t.refuse(ctx); err != nil {
		return nil, err
	}
	return t.inner.Invoke(t.priced(ctx), input, opts...)
}

func (t *tagged) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	if err := t.refuse(ctx); err != nil {
		return nil, err
	}
	return t.inner.Batch(t.priced(ctx), inputs, opts...)
}

func (t *tagged) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	if err := t.refuse(ctx); err != nil {
		return nil, err
	}
	return t.inner.Stream(t.priced(ctx), input, opts...)
}

func (t *tagged) Resume(ctx context.Context, input any, last any, opts ...core.Option) (<-chan any, error) {
	resumer, ok := t.inner.(core.Resumer)
	if !ok {
		return nil, fmt.Errorf("route: tagged Runnable cannot resume: %w", streams.ErrNotResumable)
	}
	return resumer.Resume(t.priced(ctx), input, last, opts...)
}

func (t *tagged) CanResume(ctx context.Context) bool { return streams.CanResume(ctx, t.inner) }

// Error is the failure of a call whose constraints leave no candidate to
// serve it, or that no candidate could ever meet. It comes marked
// retry.Permanent (the same constraints leave the same candidates), and is
// Local: no provider was asked, and a fallback moves on from a candidate
// that answers it.
type Error struct {
	// Constraint is the one that rejected the last candidates ("require
	// region:eu", "max price 3 (it costs 5)"), or why the constraints can
	// never be met ("tag \"regoin:eu\": no candidate carries it").
	Constraint string
	// Rejected names each candidate passed over and why.
	Rejected []string
}

// Error names the constraint and the candidates it passed over.
func (e *Error) Error() string {
	if len(e.Rejected) == 0 {
		return "route: " + e.Constraint
	}
	return fmt.Sprintf("route: no candidate meets the constraints (%s): %s", e.Constraint, strings.Join(e.Rejected, "; "))
}

// Local reports true: no provider was asked.
func (e *Error) Local() bool { return true }

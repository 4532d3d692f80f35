// Package run carries a run's budget (budget.WithRun) to the layers that
// draw on it, and says how they draw: the rule that nested layers count a
// request once.
//
// Every layer that sends a request to what it wraps (a retry layer's
// attempt, a fallback's candidate, a pool's deployment, a hedge's
// request) takes a Ticket for it before sending. A ticket either claims the draw its caller's layer
// made for this same dispatch, the first time that is asked, or draws
// anew. So retry ⊃ fallback ⊃ retry ⊃ pool draws once per request that
// leaves the innermost layer: the outer attempt's draw is claimed by the
// candidate, the candidate's by the inner attempt, that by the pool's
// first deployment; a second attempt, a second candidate or a pool moving
// on draws its own.
//
// A draw whose dispatch was refused on this side (a Local() error, as an
// open circuit or a limiter's refusal says) and was not claimed below is
// given back: nothing reached a provider.
package run

import (
	"context"
	"sync/atomic"

	"github.com/steadfast-go/steadfast/internal/errproto"
)

// A Budget is a run's budget, made by budget.WithRun.
type Budget interface {
	// Draw takes n calls, or returns the error that ends the run when
	// they, or its tokens or cost, are spent.
	Draw(n int) error
	// Check returns the error Draw(n) would, taking nothing.
	Check(n int) error
	// Refund gives back n calls drawn and never sent.
	Refund(n int)
	// Report counts tokens a provider billed, at price dollars a
	// million (priced false: no price was known where they were sent).
	Report(tokens int64, price float64, priced bool)
	// Totals returns the budget's limits and what it has spent, as
	// budget.Run values, for a call's core.State.
	Totals() (limits, spent Totals)
	// Raise lifts what was spent to at least spent (a run continued from
	// a checkpoint written in another process).
	Raise(spent Totals)
}

// Totals are calls, tokens and dollars: a run's limits or its spend.
type Totals struct {
	Calls  int     `json:"calls,omitempty"`
	Tokens int64   `json:"tokens,omitempty"`
	Cost   float64 `json:"cost,omitempty"`
}

// Key is the context key of a run's Budget.
type Key struct{}

// From returns ctx's run budget, nil when it has none.
func From(ctx context.Context) Budget {
	b, _ := ctx.Value(Key{}).(Budget)
	return b
}

type heldKey struct{}

// held is a draw a layer made for one dispatch, offered to the layer it
// dispatches to.
type held struct {
	n       int
	claimed atomic.Bool
}

// A Ticket is the calls one dispatch holds. Its zero value holds none:
// the dispatch is under no run.
type Ticket struct {
	b       Budget
	n       int
	offered *held
}

// Take returns the context to dispatch n requests with and their ticket,
// or the error that ends the run. With no run in ctx it returns ctx and a
// zero ticket, at the cost of one lookup.
func Take(ctx context.Context, n int) (context.Context, Ticket, error) {
	b := From(ctx)
	if b == nil {
		return ctx, Ticket{}, nil
	}
	return TakeFrom(ctx, b, n)
}

// TakeFrom is Take for a caller that has looked b up.
func TakeFrom(ctx context.Context, b Budget, n int) (context.Context, Ticket, error) {
	have := 0
	if h, ok := ctx.Value(heldKey{}).(*held); ok && h.claimed.CompareAndSwap(false, true) {
		have = h.n
	}
	switch {
	case n > have:
		if err := b.Draw(n - have); err != nil {
			b.Refund(have)
			return ctx, Ticket{}, &refusal{err}
		}
	case n < have:
		b.Refund(have - n)
	}
	h := &held{n: n}
	return context.WithValue(ctx, heldKey{}, h), Ticket{b: b, n: n, offered: h}, nil
}

// Settle ends the dispatch with its error: a dispatch refused on this
// side whose draw no layer below claimed gives its calls back.
func (t Ticket) Settle(err error) {
	if t.b == nil || err == nil || t.offered.claimed.Load() || !errproto.Local(err) {
		return
	}
	t.b.Refund(t.n)
}

// Check returns the refusal a draw of n calls from b would meet, nil
// when it would be granted.
func Check(b Budget, n int) error {
	if err := b.Check(n); err != nil {
		return &refusal{err}
	}
	return nil
}

// refusal is a spent run's *budget.RunError as every layer returns it:
// not retryable, refused on this side of the wire (a breaker does not
// count it, nothing was sent), error.type run_spent.
type refusal struct{ err error }

func (e *refusal) Error() string     { return e.err.Error() }
func (e *refusal) Unwrap() error     { return e.err }
func (e *refusal) Retryable() bool   { return false }
func (e *refusal) Local() bool       { return true }
func (e *refusal) ErrorType() string { return "run_spent" }

type priceKey struct{}

// WithPrice returns a context whose reported tokens cost price dollars a
// million: a candidate's, or a deployment's, given where it is sent. It
// costs an allocation only under a run.
func WithPrice(ctx context.Context, price float64) context.Context {
	if From(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, priceKey{}, price)
}

// Report counts tokens reported in ctx against its run, at the price of
// the candidate they were sent to.
func Report(ctx context.Context, tokens int64) {
	b := From(ctx)
	if b == nil {
		return
	}
	price, priced := ctx.Value(priceKey{}).(float64)
	b.Report(tokens, price, priced)
}

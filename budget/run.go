package budget

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/steadfast-go/steadfast/internal/run"
)

// Run is a run's budget: the most calls, tokens and dollars one agent run
// or conversation may spend, as given to WithRun (a zero field is no
// limit); and, as Spent returns it, what the run has spent.
//
// Calls are the requests steadfast's layers send: every attempt of a
// retry layer, every candidate a fallback tries, every deployment a pool
// sends to, every request of a hedge, counted once however the layers
// nest, retries and fallbacks included. A request refused on this side (an open circuit, a limiter)
// is not a call. Tokens are those the providers billed, input and output,
// thrown away or not. Cost is the tokens at the price, in dollars a
// million, of the candidate that served them (route.Tag's, or a pool
// Deployment's Price).
//
// Calls are drawn before a request is sent, so a run never sends more
// than Calls. Tokens and cost are known once a provider answers: a run
// ends at the first request asked for after they reach their limit, and
// the answer that crossed it is kept, so they may end over it by one
// answer's worth.
type Run struct {
	Calls  int     `json:"calls,omitempty"`
	Tokens int64   `json:"tokens,omitempty"`
	Cost   float64 `json:"cost,omitempty"`
}

// RunError ends a run whose budget is spent: a request was asked for
// after Limit ("calls", "tokens" or "cost") had been reached, or, with a
// cost limit, after tokens were billed by a candidate with no price
// (Limit "price"). It comes wrapped: not retryable, with error.type
// run_spent, and refused on this side (a circuit breaker does not count
// it). No layer moves on from it: every further request of the run is
// refused the same way.
type RunError struct {
	// Limit is what was spent: "calls", "tokens", "cost" or "price".
	Limit string
	// Limits are the run's limits, Spent what it had spent.
	Limits, Spent Run
	// Unpriced is how many tokens came from candidates with no price.
	Unpriced int64
}

func (e *RunError) Error() string {
	switch e.Limit {
	case "calls":
		return fmt.Sprintf("budget: the run's calls are spent (%d of %d)", e.Spent.Calls, e.Limits.Calls)
	case "tokens":
		return fmt.Sprintf("budget: the run's tokens are spent (%d of %d)", e.Spent.Tokens, e.Limits.Tokens)
	case "cost":
		return fmt.Sprintf("budget: the run's cost is spent ($%.4g of $%.4g)", e.Spent.Cost, e.Limits.Cost)
	}
	return fmt.Sprintf("budget: the run has a cost limit ($%.4g) and %d tokens came from a candidate with no price: give it one with route.Tag or a pool Deployment's Price",
		e.Limits.Cost, e.Unpriced)
}

// WithRun returns a context whose calls draw on a new run's budget, of
// limits. Every steadfast layer called with it, or a context made from
// it, draws its requests from the run; a run inside a run's context
// replaces it. Spent says what it has spent.
//
// It reports an error naming a limit that is negative or not a number.
func WithRun(ctx context.Context, limits Run) (context.Context, error) {
	switch {
	case limits.Calls < 0:
		return ctx, fmt.Errorf("budget: WithRun: Calls %d is negative", limits.Calls)
	case limits.Tokens < 0:
		return ctx, fmt.Errorf("budget: WithRun: Tokens %d is negative", limits.Tokens)
	case !(limits.Cost >= 0) || math.IsInf(limits.Cost, 1):
		return ctx, fmt.Errorf("budget: WithRun: Cost %v must be a finite number of dollars, at least 0", limits.Cost)
	}
	return context.WithValue(ctx, run.Key{}, &runBudget{limits: limits}), nil
}

// Spent returns what the run of ctx has spent, and false when ctx
// carries no run.
func Spent(ctx context.Context) (Run, bool) {
	b, ok := run.From(ctx).(*runBudget)
	if !ok {
		return Run{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent, true
}

// runBudget is a run's budget, shared by every call of the run.
type runBudget struct {
	limits Run

	mu       sync.Mutex
	spent    Run
	unpriced int64 // tokens billed with no price, under a cost limit
}

func (b *runBudget) Draw(n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(n); err != nil {
		return err
	}
	b.spent.Calls += n
	return nil
}

func (b *runBudget) Check(n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.check(n)
}

// check returns the *RunError of a run that cannot afford n more calls,
// nil when it can; it runs under b.mu.
func (b *runBudget) check(n int) error {
	if limit := b.spentLimit(n); limit != "" {
		return &RunError{Limit: limit, Limits: b.limits, Spent: b.spent, Unpriced: b.unpriced}
	}
	return nil
}

// spentLimit names the limit n more calls would overrun, "" when none;
// it runs under b.mu.
func (b *runBudget) spentLimit(n int) string {
	l, s := b.limits, b.spent
	switch {
	case l.Calls > 0 && s.Calls+n > l.Calls:
		return "calls"
	case l.Tokens > 0 && s.Tokens >= l.Tokens:
		return "tokens"
	case l.Cost > 0 && b.unpriced > 0:
		return "price"
	case l.Cost > 0 && s.Cost >= l.Cost:
		return "cost"
	}
	return ""
}

func (b *runBudget) Refund(n int) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.spent.Calls = max(0, b.spent.Calls-n)
	b.mu.Unlock()
}

func (b *runBudget) Report(tokens int64, price float64, priced bool) {
	if tokens <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent.Tokens += tokens
	switch {
	case priced:
		b.spent.Cost += float64(tokens) * price / 1e6
	case b.limits.Cost > 0:
		b.unpriced += tokens
	}
}

func (b *runBudget) Totals() (limits, spent run.Totals) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return run.Totals(b.limits), run.Totals(b.spent)
}

func (b *runBudget) Raise(to run.Totals) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent.Calls = max(b.spent.Calls, to.Calls)
	b.spent.Tokens = max(b.spent.Tokens, to.Tokens)
	b.spent.Cost = max(b.spent.Cost, to.Cost)
}

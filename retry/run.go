package retry

import (
	"context"
	"fmt"

	"github.com/steadfast-go/steadfast/budget"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/run"
)

// runEntry is a run's budget as the call's core.State holds it, written
// at each attempt: a call continued from a checkpoint in another process
// (a State read back, as the Temporal adapter hands one on) carries its
// run's spend with it. live is set on entries written in this process;
// one read back has it unset.
type runEntry struct {
	Limits run.Totals `json:"limits"`
	Spent  run.Totals `json:"spent"`
	live   bool
}

var runKey = core.NewStateKey[runEntry]("steadfast.run")

// joinRun finds the run the call draws on, and returns the call's
// context. A call that carries on from elsewhere (a continuation, a
// Resume) whose State holds a run's spend read back from another process
// takes it up: the run of its context has spent at least that much, and a
// context with no run gets one of the entry's limits.
func (c *call) joinRun(ctx context.Context, continued bool) context.Context {
	c.run = run.From(ctx)
	if !continued {
		return ctx
	}
	e, ok := runKey.Load(ctx)
	if !ok || e.live {
		return ctx
	}
	if c.run == nil {
		rctx, err := budget.WithRun(ctx, budget.Run(e.Limits))
		if err != nil {
			return ctx // an entry of limits no run could have: not a run's
		}
		ctx, c.run = rctx, run.From(rctx)
	}
	c.run.Raise(e.Spent)
	return ctx
}

// takeRun draws attempt a's requests (n: a Batch round's items) from the
// call's run, and notes the run's totals in the call's State; a refusal
// is the attempt's error, a.refused.
func (c *call) takeRun(a *attempt, n int) {
	var err error
	a.ctx, a.ticket, err = run.TakeFrom(a.ctx, c.run, n)
	if err != nil {
		a.refused = err
		return
	}
	limits, spent := c.run.Totals()
	runKey.Store(a.ctx, runEntry{Limits: limits, Spent: spent, live: true})
}

// runSpent returns the error that ends a call whose run cannot afford the
// again attempts it would retry, nil when it can.
func (c *call) runSpent(again int) error {
	if c.run == nil {
		return nil
	}
	return run.Check(c.run, again)
}

// runEnded is the error of a call whose run ended it after last.
func runEnded(spent, last error) error {
	if last == nil {
		return spent
	}
	return fmt.Errorf("%w (the last attempt: %w)", spent, last)
}

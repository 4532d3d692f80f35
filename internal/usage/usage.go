// Package usage carries the tokens a call's attempts were billed, from
// where a provider reports them (llmhttp.Response.Record, in the
// provider's adapter) to the retry layer, which sums them on its call span
// and tells the tokens whose output reached the caller from those thrown
// away.
//
// A Meter counts what is reported under it. Meters nest: the retry layer
// gives each call one and each attempt one under it; a decorator that
// sends one attempt several times (a hedge, a fallback, a pool moving on)
// gives each of its requests one under the attempt's, and discards those
// whose output it does not return. Everything reported reaches every
// meter above it; what is discarded, too.
package usage

import (
	"context"
	"sync"

	"github.com/steadfast-go/steadfast/internal/run"
)

// A Meter counts the tokens reported under it, and those of them that
// were discarded. It is safe for concurrent use; a nil *Meter counts
// nothing.
type Meter struct {
	parent *Meter

	mu                       sync.Mutex
	input, output, discarded int64
	reported                 bool
	// gone is set by Discard: tokens reported later (a stream abandoned
	// before its provider said what it cost) are discarded as they come.
	gone bool
}

// New returns a meter under parent (nil for none).
func New(parent *Meter) *Meter { return &Meter{parent: parent} }

// Key is the context key of the meter that reports in a context count
// under.
type Key struct{}

// From returns the meter of ctx, nil when none.
func From(ctx context.Context) *Meter {
	m, _ := ctx.Value(Key{}).(*Meter)
	return m
}

// Sub returns a context whose reports count under a meter of their own,
// under ctx's, and that meter: a decorator's request, to keep or discard.
// When ctx has no meter, tokens are not being counted: it returns ctx and
// nil, at the cost of one lookup.
func Sub(ctx context.Context) (context.Context, *Meter) {
	parent := From(ctx)
	if parent == nil {
		return ctx, nil
	}
	return Under(ctx, parent)
}

// Attach makes m, a zero Meter held in a struct of the caller's, count
// under parent as one from New would: a context that carries a Meter among
// other fields saves the Meter's allocation.
func (m *Meter) Attach(parent *Meter) { m.parent = parent }

// Under returns a context whose reports count under a new meter, under
// parent, and that meter: one allocation for both.
func Under(ctx context.Context, parent *Meter) (context.Context, *Meter) {
	c := &meterCtx{Context: ctx}
	c.m.parent = parent
	return c, &c.m
}

// meterCtx is a context that carries a meter of its own.
type meterCtx struct {
	context.Context
	m Meter
}

func (c *meterCtx) Value(key any) any {
	if key == (Key{}) {
		return &c.m
	}
	return c.Context.Value(key)
}

// Report counts input and output tokens under ctx's meter, and every
// meter above it; as discarded, from the first that was discarded up.
func Report(ctx context.Context, input, output int64) {
	run.Report(ctx, input+output)
	lost := false
	for m := From(ctx); m != nil; m = m.parent {
		m.mu.Lock()
		lost = lost || m.gone
		m.input += input
		m.output += output
		if lost {
			m.discarded += input + output
		}
		m.reported = true
		m.mu.Unlock()
	}
}

// Discard counts what was reported under m, and not discarded yet, as
// discarded, in m and every meter above it: its output never reached the
// caller. What is reported under m later is discarded too. It returns how
// many tokens it discarded.
func (m *Meter) Discard() int64 {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	n := m.input + m.output - m.discarded
	m.discarded += n
	m.gone = true
	m.mu.Unlock()
	if n <= 0 {
		return 0
	}
	for x := m.parent; x != nil; x = x.parent {
		x.mu.Lock()
		x.discarded += n
		x.mu.Unlock()
	}
	return n
}

// Totals returns the input and output tokens reported under m, those
// discarded, and whether anything was reported.
func (m *Meter) Totals() (input, output, discarded int64, reported bool) {
	if m == nil {
		return 0, 0, 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.input, m.output, m.discarded, m.reported
}

// Items are the meters of a Batch attempt's inputs, by position: a Batch
// that calls each input on its own (core.RunnableFunc's) reports each
// input's tokens under its meter, so that each item counts its own. The
// retry layer hands Item to such a Batch under the item key (core.RunnableFunc's Batch reads it).
type Items []*Meter

// Item returns the context of input i of a Batch whose item meters are
// items: under its own meter, when it has one.
func (items Items) Item(ctx context.Context, i int) context.Context {
	if i >= len(items) || items[i] == nil {
		return ctx
	}
	return context.WithValue(ctx, Key{}, items[i])
}

package retry

import (
	"context"

	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/internal/genai"
)

// endInferences ends attempt a's inferences (WithGenAIConventions) with
// err, the attempt's failure or nil. A Batch's items that ended on their
// own (endItemInferences) are not ended again.
func (c *call) endInferences(ctx context.Context, a *attempt, err error) {
	etype := ""
	if err != nil {
		etype = errproto.Type(err)
	}
	if a.gen != nil {
		a.gen.End(ctx, err, etype)
	}
	for _, s := range a.gens {
		s.End(ctx, err, etype)
	}
}

// itemInferences gives each item of Batch attempt a (n items) an
// inference of its own, in the context the inner Batch makes for it
// (core.RunnableFunc's Batch calls each item with it), on top of the
// item's token meter when the call counts tokens.
func (c *call) itemInferences(a *attempt, n int) {
	resends := c.first.retries() + a.n - 1 // outer layers' sends, and this layer's rounds before
	a.gens = make([]*genai.Slot, n)
	for i := range a.gens {
		a.gens[i] = c.r.tel.genAI.NewSlot(false, resends)
	}
	gens, items := a.gens, a.items
	a.ctx = context.WithValue(a.ctx, itemKey, func(ctx context.Context, i int) context.Context {
		if items != nil {
			ctx = items.Item(ctx, i)
		}
		if i < 0 || i >= len(gens) {
			return ctx
		}
		return context.WithValue(ctx, genai.Key{}, gens[i])
	})
}

// endItemInferences ends each item's inference of a Batch attempt with
// the item's own error (errs[i], nil for a success).
func (c *call) endItemInferences(ctx context.Context, a *attempt, errs []error) {
	for i, s := range a.gens {
		var err error
		if i < len(errs) {
			err = errs[i]
		}
		etype := ""
		if err != nil {
			etype = errproto.Type(err)
		}
		s.End(ctx, err, etype)
	}
}

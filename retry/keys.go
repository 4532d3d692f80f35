package retry

import (
	"context"

	"github.com/steadfast-go/steadfast/core"
)

// core's context keys of a call's State and of a Batch's item contexts
// are not exported, so that no importer can reassign them. The retry
// layer's attempt contexts answer them from their own fields (an attempt's
// State, a Batch's item contexts, with no allocation), so they learn them
// here, once, by asking core through a context that notes the key it is
// asked for.
var (
	stateKey = keyOf(func(ctx context.Context) { core.StateFrom(ctx) })
	itemKey  = keyOf(func(ctx context.Context) { _, _ = core.RunnableFunc(nil).Batch(ctx, nil) })
)

// keyProbe is a Context that notes the key its Value is asked for.
type keyProbe struct {
	context.Context
	key any
}

func (p *keyProbe) Value(key any) any {
	p.key = key
	return nil
}

// keyOf returns the key ask reads from its context.
func keyOf(ask func(context.Context)) any {
	p := &keyProbe{Context: context.Background()}
	ask(p)
	if p.key == nil {
		panic("retry: core asked its context for no key")
	}
	return p.key
}

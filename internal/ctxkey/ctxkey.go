// Package ctxkey holds the context keys that core sets and other packages
// of this repository answer for themselves: the retry layer's attempt
// context answers State from its own fields, saving an allocation per
// call.
package ctxkey

// State is the key of a call's *core.State in a context.
type State struct{}

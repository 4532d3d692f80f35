package mock

import "github.com/steadfast-go/steadfast/core"

// NamedRunnable is a Runnable with a default operation name (core.Named).
type NamedRunnable struct {
	core.Runnable
	name string
}

// Named returns r with the name name.
func Named(name string, r core.Runnable) *NamedRunnable {
	return &NamedRunnable{Runnable: r, name: name}
}

// Name returns the name given to Named.
func (n *NamedRunnable) Name() string { return n.name }

// SideEffectRunnable is a Runnable that reports Idempotent() == false, as a
// tool that sends an email or makes a payment would.
type SideEffectRunnable struct {
	core.Runnable
}

// NonIdempotent returns r reporting Idempotent() == false.
func NonIdempotent(r core.Runnable) *SideEffectRunnable {
	return &SideEffectRunnable{Runnable: r}
}

// Idempotent reports false.
func (*SideEffectRunnable) Idempotent() bool { return false }

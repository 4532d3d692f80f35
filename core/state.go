package core

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
)

// State is what the decorators of one logical call remember about it
// between its attempts: the deployment a stream was served by, the
// deployments that failed it, the candidate a stream committed on, a
// provider's response id. It lives with the call and ends with it, so it
// can neither forget a live call nor grow with finished ones.
//
// The retry layer gives every call a State, found with StateFrom on the
// context of each of its attempts; a call that already has one (an outer
// retry layer's, or one given back with WithState) keeps it. A State is
// safe for concurrent use; its zero value is ready.
//
// Entries whose key has a name survive a process: MarshalJSON writes
// them, and a State read back with UnmarshalJSON and handed to a later
// call with WithState answers for them, so that a stream broken with its
// worker can resume on another.
type State struct {
	// d is made on the first write: a call whose decorators remember
	// nothing costs a pointer.
	d atomic.Pointer[stateData]
}

type stateData struct {
	mu   sync.Mutex
	vals map[any]any
	// raw holds named entries read back by UnmarshalJSON, until a key of
	// that name first asks for them.
	raw map[string]json.RawMessage
	// names holds the key of each named entry, for MarshalJSON.
	names map[string]namedKey
}

// data returns s's entries, made when make is set and there are none yet;
// it returns nil when there are none and make is not set.
func (s *State) data(make bool) *stateData {
	if d := s.d.Load(); d != nil || !make {
		return d
	}
	s.d.CompareAndSwap(nil, &stateData{})
	return s.d.Load()
}

// StateKey names one entry of a State, holding a T. Keys are compared by
// identity: a decorator makes its keys once per instance, so that two
// pools in one chain never share an entry.
type StateKey[T any] struct {
	name string
}

// namedKey is a StateKey of any type: the map key of its entries, its
// name, and how to decode an entry read back by UnmarshalJSON.
type namedKey interface {
	keyName() string
	decode(json.RawMessage) (any, error)
}

func (k *StateKey[T]) keyName() string { return k.name }

// NewStateKey returns a new key. A name makes its entries durable (written
// by MarshalJSON, read back by UnmarshalJSON): it must be the same in the
// process that writes the State and the one that reads it, and T must
// round-trip through encoding/json. With name "" the entry stays in
// memory.
func NewStateKey[T any](name string) *StateKey[T] {
	return &StateKey[T]{name: name}
}

// stateKey is the context key of a call's *State. It is not exported: a
// Context of one's own that starts calls (the retry layer's attempt
// contexts) finds it by asking StateFrom once, and answers it from its own
// fields, so that giving an attempt a State costs no allocation.
var stateKey = &contextKey{"state"}

// contextKey is the type of core's context keys: a pointer, so each is
// unique, with a name for debugging.
type contextKey struct{ name string }

func (k *contextKey) String() string { return "steadfast/core " + k.name + " context key" }

// WithState returns a context carrying s as the State of the calls made
// with it: a retry layer called with it uses s rather than a State of its
// own. It is how a State read back with UnmarshalJSON reaches a Resume.
func WithState(ctx context.Context, s *State) context.Context {
	return context.WithValue(ctx, stateKey, s)
}

// StateFrom returns the State of the call ctx belongs to, or nil outside
// a call.
func StateFrom(ctx context.Context) *State {
	s, _ := ctx.Value(stateKey).(*State)
	return s
}

// Load returns k's entry in the State of the call ctx belongs to. Outside
// a call it reports false.
func (k *StateKey[T]) Load(ctx context.Context) (T, bool) {
	var zero T
	s := StateFrom(ctx)
	if s == nil {
		return zero, false
	}
	d := s.data(false)
	if d == nil {
		return zero, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.load(k)
	if !ok {
		return zero, false
	}
	return v.(T), true
}

// load returns k's entry, decoding a raw one read back by UnmarshalJSON;
// it runs under d.mu.
func (s *stateData) load(k namedKey) (any, bool) {
	if v, ok := s.vals[k]; ok {
		return v, true
	}
	name := k.keyName()
	if name == "" || s.raw[name] == nil {
		return nil, false
	}
	v, err := k.decode(s.raw[name])
	delete(s.raw, name)
	if err != nil {
		return nil, false // an entry of another shape: as if none
	}
	s.set(k, v)
	return v, true
}

func (k *StateKey[T]) decode(data json.RawMessage) (any, error) {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// Store sets k's entry in the State of the call ctx belongs to. Outside
// a call it remembers nothing.
func (k *StateKey[T]) Store(ctx context.Context, v T) {
	s := StateFrom(ctx)
	if s == nil {
		return
	}
	d := s.data(true)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.set(k, v)
}

// set sets k's entry; it runs under d.mu.
func (s *stateData) set(k namedKey, v any) {
	if s.vals == nil {
		s.vals = make(map[any]any)
	}
	s.vals[k] = v
	if name := k.keyName(); name != "" {
		if s.names == nil {
			s.names = make(map[string]namedKey)
		}
		s.names[name] = k
		delete(s.raw, name)
	}
}

// MarshalJSON writes the entries whose keys have a name, and those read
// back and not yet asked for, as one JSON object by name.
func (s *State) MarshalJSON() ([]byte, error) {
	d := s.data(true)
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]json.RawMessage, len(d.names)+len(d.raw))
	for name, raw := range d.raw {
		out[name] = raw
	}
	for name, k := range d.names {
		b, err := json.Marshal(d.vals[k])
		if err != nil {
			return nil, fmt.Errorf("core: state entry %q: %w", name, err)
		}
		out[name] = b
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads entries written by MarshalJSON; each is decoded when
// a key of its name first asks for it.
func (s *State) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("core: state: %w", err)
	}
	d := s.data(true)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.raw == nil {
		d.raw = make(map[string]json.RawMessage, len(raw))
	}
	for name, v := range raw {
		d.raw[name] = v
	}
	return nil
}

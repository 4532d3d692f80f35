// Package recent is a map that remembers only its most recent keys: what
// the decorators over several Runnables (fallback, hedge, pool) keep per
// logical call, by its InvocationID, for the calls that may follow it (a
// Resume, a retry), without growing for ever.
package recent

import "sync"

// Size is how many keys a Map remembers; past it, the oldest is forgotten.
const Size = 4096

// Map is a map of the last Size keys set. It is safe for concurrent use;
// its zero value is ready.
type Map[V any] struct {
	mu    sync.Mutex
	m     map[string]V
	order []string // keys in the order first set, a ring of Size
	next  int
}

// Set sets key's value.
func (r *Map[V]) Set(key string, v V) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.set(key, v)
}

// set sets key's value; it runs under r.mu.
func (r *Map[V]) set(key string, v V) {
	if r.m == nil {
		r.m = make(map[string]V)
	}
	if _, ok := r.m[key]; !ok {
		if len(r.order) < Size {
			r.order = append(r.order, key)
		} else {
			delete(r.m, r.order[r.next])
			r.order[r.next] = key
			r.next = (r.next + 1) % Size
		}
	}
	r.m[key] = v
}

// Get returns key's value, if it is remembered.
func (r *Map[V]) Get(key string) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[key]
	return v, ok
}

// Update sets key's value to f of its value (the zero value if none), at
// once, and returns the new value. f must not use r.
func (r *Map[V]) Update(key string, f func(V) V) V {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := f(r.m[key])
	r.set(key, v)
	return v
}

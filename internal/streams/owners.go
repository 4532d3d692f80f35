package streams

import "sync"

// maxOwners bounds what Owners remembers: a Resume of a stream older than
// the last maxOwners ones is answered core.ErrNotResumable.
const maxOwners = 4096

// Owners remembers, for the streams of a decorator over several Runnables
// (fallback's candidates, hedge's targets), which one each stream
// committed on, by the logical call's InvocationID: a Resume of that call
// must go to the same one. It forgets the oldest past maxOwners. It is
// safe for concurrent use; its zero value is ready.
type Owners struct {
	mu    sync.Mutex
	owner map[string]int
	order []string // ids in the order set, a ring of maxOwners
	next  int
}

// Set records that the stream of call id committed on Runnable i.
func (o *Owners) Set(id string, i int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.owner == nil {
		o.owner = make(map[string]int)
	}
	if _, ok := o.owner[id]; !ok {
		if len(o.order) < maxOwners {
			o.order = append(o.order, id)
		} else {
			delete(o.owner, o.order[o.next])
			o.order[o.next] = id
			o.next = (o.next + 1) % maxOwners
		}
	}
	o.owner[id] = i
}

// Get returns the Runnable the stream of call id committed on.
func (o *Owners) Get(id string) (int, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	i, ok := o.owner[id]
	return i, ok
}

package breaker

import (
	"sync"
	"sync/atomic"

	"github.com/sony/gobreaker/v2"
)

// stateChange is one transition of the circuit.
type stateChange struct{ from, to gobreaker.State }

// stateChanges queues the circuit's state changes and delivers them to the
// hooks once gobreaker's lock is released. gobreaker reports a change with
// its lock held, so a hook called there that read State or Counts would
// deadlock the breaker.
type stateChanges struct {
	queued     atomic.Int32 // len(pending), read without the lock
	mu         sync.Mutex
	pending    []stateChange
	delivering sync.Mutex // held by the one goroutine delivering
	deliver    func(stateChange)
}

// add queues a change; gobreaker calls it with its lock held.
func (q *stateChanges) add(_ string, from, to gobreaker.State) {
	q.mu.Lock()
	q.pending = append(q.pending, stateChange{from, to})
	q.queued.Store(int32(len(q.pending)))
	q.mu.Unlock()
}

// flush delivers the queued changes, in order. One goroutine delivers at a
// time: a flush that finds another under way leaves its changes to that
// one, which delivers until the queue is empty, so a hook that calls the
// breaker again does not deadlock either.
func (q *stateChanges) flush() {
	for q.queued.Load() > 0 && q.delivering.TryLock() {
		q.deliverQueued()
		// A change queued after the last drain, whose own flush found us
		// delivering, is picked up by the loop.
	}
}

func (q *stateChanges) deliverQueued() {
	defer q.delivering.Unlock() // even when a hook panics
	for {
		q.mu.Lock()
		batch := q.pending
		q.pending = nil
		q.queued.Store(0)
		q.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		for _, c := range batch {
			q.deliver(c)
		}
	}
}

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
	queued atomic.Int32 // len(pending), read without the lock
	// seq counts the changes ever queued: a call that reads it before and
	// after it reports learns, with no lock, whether the circuit changed
	// meanwhile.
	seq        atomic.Uint64
	mu         sync.Mutex
	pending    []stateChange
	recent     [recentChanges]stateChange // the last changes, by seq
	delivering sync.Mutex                 // held by the one goroutine delivering
	deliver    func(stateChange)
}

// recentChanges is how many of the last changes since can tell: a report
// spans at most one change of its own, and a few of concurrent calls'.
const recentChanges = 4

// add queues a change; gobreaker calls it with its lock held.
func (q *stateChanges) add(_ string, from, to gobreaker.State) {
	q.mu.Lock()
	n := q.seq.Add(1)
	q.recent[n%recentChanges] = stateChange{from, to}
	q.pending = append(q.pending, stateChange{from, to})
	q.queued.Store(int32(len(q.pending)))
	q.mu.Unlock()
}

// since returns the changes queued after the seq-th, as many as it
// remembers, in order.
func (q *stateChanges) since(seq uint64) []stateChange {
	q.mu.Lock()
	defer q.mu.Unlock()
	last := q.seq.Load()
	first := seq + 1
	if last >= recentChanges && first <= last-recentChanges {
		first = last - recentChanges + 1 // older ones are forgotten
	}
	var out []stateChange
	for n := first; n <= last; n++ {
		out = append(out, q.recent[n%recentChanges])
	}
	return out
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

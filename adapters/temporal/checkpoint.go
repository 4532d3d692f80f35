package temporal

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
)

// checkpoint is what an activity records in its heartbeat details, and
// the next activity attempt reads back: the attempts the call made and,
// for a stream, how far its delivery got.
type checkpoint struct {
	// Attempts is how many attempts the call has started, in every
	// activity attempt so far.
	Attempts int `json:"attempts"`
	// Delivered is how many chunks were handed to deliver.
	Delivered int `json:"delivered,omitempty"`
	// Last is the last chunk delivered, as JSON.
	Last json.RawMessage `json:"last,omitempty"`
	// State is the call's core.State (its named entries: what Resume
	// needs), as JSON.
	State json.RawMessage `json:"state,omitempty"`
}

// readCheckpoint returns the checkpoint the last activity attempt
// recorded, the zero one on the first attempt.
func readCheckpoint(ctx context.Context) (checkpoint, error) {
	var cp checkpoint
	if !activity.HasHeartbeatDetails(ctx) {
		return cp, nil
	}
	err := activity.GetHeartbeatDetails(ctx, &cp)
	return cp, err
}

// heartbeat records an activity's checkpoint as it changes, and again
// every so often while a call is in flight: Temporal then knows the worker
// is alive (a model silent before its first token does not trip the
// heartbeat timeout) and can deliver a cancellation. Its goroutine ends
// with stop.
//
// The SDK sends an activity's first heartbeat at once and holds each
// later one until 80 % of the HeartbeatTimeout has passed since the last
// it sent. A stream's first heartbeat therefore waits for the first chunk
// delivered (or the first tick, for a model silent that long): sent at
// the attempt's start, it would leave that chunk unknown to the server
// for most of a HeartbeatTimeout, and a worker dying then would start the
// stream again from scratch.
type heartbeat struct {
	ctx       context.Context
	mu        sync.Mutex
	cp        checkpoint
	holdFirst bool // a stream's: the first heartbeat carries a chunk
	sent      bool // a heartbeat was recorded
	done      chan struct{}
	wg        sync.WaitGroup
}

// startHeartbeat starts heartbeating cp every so often; with holdFirst,
// attempts alone are not recorded until a heartbeat was.
func startHeartbeat(ctx context.Context, cp checkpoint, every time.Duration, holdFirst bool) *heartbeat {
	h := &heartbeat{ctx: ctx, cp: cp, holdFirst: holdFirst, done: make(chan struct{})}
	h.wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				h.update(func(*checkpoint) {})
			case <-h.done:
				return
			case <-ctx.Done():
				return
			}
		}
	})
	return h
}

// update changes the checkpoint with f and records it at once.
func (h *heartbeat) update(f func(*checkpoint)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(&h.cp)
	h.record()
}

// record records the checkpoint; h.mu is held.
func (h *heartbeat) record() {
	h.sent = true
	activity.RecordHeartbeat(h.ctx, h.cp)
}

// checkpoint returns the checkpoint as it is.
func (h *heartbeat) checkpoint() checkpoint {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cp
}

// attempted records that attempt n of the call started: at once, unless
// the first heartbeat is held for a chunk, when the count goes with it.
func (h *heartbeat) attempted(_ context.Context, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cp.Attempts = max(h.cp.Attempts, n)
	if !h.holdFirst || h.sent {
		h.record()
	}
}

// stop ends the heartbeats and waits for their goroutine.
func (h *heartbeat) stop() {
	close(h.done)
	h.wg.Wait()
}

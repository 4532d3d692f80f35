package bench

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx is done, and returns ctx's error then. The
// simulated providers and clients wait with it.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Send delivers v on ch, or reports false when ctx ends first.
func Send(ctx context.Context, ch chan<- any, v any) bool {
	select {
	case ch <- v:
		return true
	case <-ctx.Done():
		return false
	}
}

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

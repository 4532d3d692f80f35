package budget

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// A call held when it came is released by whichever answer lets it go:
// also when the hold ends before its turn (it was counted twice as a call
// that came, held and then as a first attempt, before).
func TestHeldCallIsReleasedWhenTheHoldEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b, err := NewAdaptive(0.5, 1, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for range 300 { // an outage at 1000 calls a second
			b.RecordAttempt(ctx, 1, false)
			b.ReserveRetry(ctx, 0)
			time.Sleep(time.Millisecond)
		}
		held := 0
		for ; held < 1000; held++ { // the probes' turns go first; then a call is held
			if _, again := b.HoldFirst(ctx, 0); again {
				break
			}
		}
		arrived, released := b.arrived.Load(), b.released.Load()
		if arrived-released != 1 {
			t.Fatalf("after a call was told to ask again: arrived %d, released %d; want one held", arrived, released)
		}
		for range 1000 { // the provider is back: the hold ends
			b.RecordAttempt(ctx, 1, true)
			time.Sleep(time.Millisecond)
		}
		if d, again := b.HoldFirst(ctx, 100*time.Millisecond); d != 0 || again {
			t.Fatalf("HoldFirst() = %v, %v once attempts succeed, want 0, false", d, again)
		}
		if got := b.arrived.Load() - b.released.Load(); got != 0 {
			t.Errorf("held calls not released: %d, want 0", got)
		}
	})
}

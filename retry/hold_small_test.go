package retry_test

import (
	"testing"
	"testing/synctest"
	"time"
)

// A small provider's clients (a few slots, 40 calls a second) fail fewer
// than a quorum in a tenth of a second even when every attempt fails: the
// hold is judged over the shortest span in which a quorum failed, up to a
// second, so their outage holds first attempts too. (Judged over a fixed
// tenth, as before, it never did, and a small provider that collapsed
// recovered no sooner than without retries.)
func TestAdaptiveHoldsForASmallProvider(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 0.5, 1, time.Second)
		for range 80 { // two healthy seconds at 40 calls a second
			b.RecordAttempt(ctx, 1, true)
			b.ReserveRetry(ctx, 0)
			time.Sleep(25 * time.Millisecond)
		}
		if d, again := b.HoldFirst(ctx, 0); d != 0 || again {
			t.Fatalf("HoldFirst() = %v, %v while every attempt succeeds, want 0, false", d, again)
		}
		for range 12 { // 300ms of outage: 12 failures, never ten in a tenth of a second
			b.RecordAttempt(ctx, 1, false)
			b.ReserveRetry(ctx, 0)
			time.Sleep(25 * time.Millisecond)
		}
		held := false
		for range 10 {
			if d, again := b.HoldFirst(ctx, 0); d > 0 || again {
				held = true
				break
			}
		}
		if !held {
			t.Errorf("no first attempt held after 12 failures in 300ms at 40 calls a second, want them held")
		}
	})
}

// While first attempts are held, the probes follow the calls that come,
// not the first attempts made (which fall as calls are held): a long
// outage keeps probing at an eighth of the calls' rate instead of
// dwindling to nothing, so the provider's return is seen at once.
func TestAdaptiveProbesFollowTheCallsThatCome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 0.5, 1, time.Second)
		for range 300 { // an outage at 1000 calls a second, nothing held yet
			b.RecordAttempt(ctx, 1, false)
			b.ReserveRetry(ctx, 0)
			time.Sleep(time.Millisecond)
		}
		// Two more seconds of outage at 1000 calls a second, every call
		// asking to go once: the ones given a turn go, and fail.
		went := 0
		for range 2000 {
			if _, again := b.HoldFirst(ctx, 0); !again {
				went++
				b.RecordAttempt(ctx, 1, false)
			}
			time.Sleep(time.Millisecond)
		}
		// An eighth of 2000 calls is 250; a hold that followed the first
		// attempts made would have let fewer and fewer through.
		if went < 150 || went > 400 {
			t.Errorf("%d of 2000 held calls were given a turn in 2s of outage, want about an eighth (150 to 400)", went)
		}
	})
}

// Once first attempts have been held for half a second, the retries not
// yet seen are presumed to fail as the attempts do, not to succeed as at
// first: held calls that go after their wait and fail do not get a
// second's worth of retries reserved ahead before any of them has failed.
func TestAdaptiveSustainedHoldPresumesRetriesFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 0.5, 1, time.Second)
		for range 1500 { // 1.5s of outage at 1000 calls a second, no retry yet
			b.RecordAttempt(ctx, 1, false)
			b.HoldFirst(ctx, 0)
			time.Sleep(time.Millisecond)
		}
		if got := b.Rate(); got > 10 {
			t.Errorf("Rate() = %.1f after 1.5s of outage with no retry seen, want the floor (at most 10)", got)
		}
	})
}

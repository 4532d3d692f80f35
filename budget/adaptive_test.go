package budget_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/budget"
	"github.com/steadfast-go/steadfast/core"
)

func newAdaptive(t *testing.T, ratio, minRate float64, maxWait time.Duration) *budget.Adaptive {
	t.Helper()
	b, err := budget.NewAdaptive(ratio, minRate, maxWait)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// feed records n first attempts and, of retries, ok successes and bad
// failures, spread over d.
func feed(ctx context.Context, b *budget.Adaptive, d time.Duration, firsts, ok, bad int) {
	step := d / time.Duration(firsts)
	for i := range firsts {
		b.RecordAttempt(ctx, 1, true)
		if i < ok {
			b.RecordAttempt(ctx, 2, true)
		}
		if i < bad {
			b.RecordAttempt(ctx, 2, false)
		}
		time.Sleep(step)
	}
}

// While retries succeed, the rate is ratio of the first attempts'; as they
// fail it falls with their success share, to minPerSecond when none does.
func TestAdaptiveRateFollowsWhatRetriesAchieve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 0.2, 2, time.Second)
		// A second to warm up: in its first, a budget reads the attempts
		// made before its first snapshot as come at once (a herd's).
		feed(ctx, b, time.Second, 1000, 100, 0)
		feed(ctx, b, time.Second, 1000, 100, 0) // 1000 first attempts/s, retries all succeed
		if got := b.Rate(); got < 190 || got > 210 {
			t.Errorf("Rate() = %.1f with working retries, want about 0.2 × 1000/s = 200", got)
		}
		feed(ctx, b, time.Second, 1000, 50, 50) // half the retries fail
		if got := b.Rate(); got < 90 || got > 110 {
			t.Errorf("Rate() = %.1f with half the retries failing, want about 100", got)
		}
		feed(ctx, b, time.Second, 1000, 0, 100) // an outage: every retry fails
		if got := b.Rate(); got != 2 {
			t.Errorf("Rate() = %.1f when no retry works, want minPerSecond, 2", got)
		}
	})
}

// down records, spread over d, firsts first attempts and retries retries
// that all fail: an outage.
func down(ctx context.Context, b *budget.Adaptive, d time.Duration, firsts, retries int) {
	step := d / time.Duration(firsts)
	for i := range firsts {
		b.RecordAttempt(ctx, 1, false)
		if i < retries {
			b.RecordAttempt(ctx, 2, false)
		}
		time.Sleep(step)
	}
}

// Once the window has forgotten an outage's failed retries, the rate stays
// at the floor while first attempts keep failing; once they succeed again
// (the provider is back), retries not yet seen are presumed to fare as
// they do, so that retries refused in the outage do not keep the rate at
// the floor after it (a retry bounded by a deadline cannot wait for the
// floor's token, and none would be made to speak for the return). Each
// retry that succeeds lifts the rate too.
func TestAdaptiveRemembersAnOutageUntilAttemptsSucceed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 0.2, 2, time.Second)
		down(ctx, b, time.Second, 1000, 100) // an outage: every attempt fails
		down(ctx, b, 2*time.Second, 2000, 0) // and no retry for two seconds
		if got := b.Rate(); got != 2 {
			t.Errorf("Rate() = %.1f with the retries' failures out of the window, want the floor, 2", got)
		}
		if res := b.ReserveRetry(ctx, 100*time.Millisecond); res.OK {
			// The floor's one token was earned over the quiet seconds.
			if res = b.ReserveRetry(ctx, 100*time.Millisecond); res.OK {
				t.Errorf("a second retry in the outage under a 100ms deadline was let go: %+v", res)
			}
		}
		feed(ctx, b, time.Second, 1000, 0, 0) // the provider is back: first attempts succeed, no retry yet
		if got := b.Rate(); got < 190 || got > 210 {
			t.Errorf("Rate() = %.1f once first attempts succeed again, want about 0.2 × 1000/s = 200", got)
		}
		if res := b.ReserveRetry(ctx, 100*time.Millisecond); !res.OK || res.Delay > 100*time.Millisecond {
			t.Errorf("a retry under a 100ms deadline after the return: %+v, want a turn within it", res)
		}
	})
}

// First attempts that succeed do not speak for retries that are seen to
// fail: with a quorum of failed retries, the rate is the floor whatever
// the first attempts do, and a few successful retries lift it part way.
func TestAdaptiveRetriesSpeakForThemselves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 0.2, 2, time.Second)
		feed(ctx, b, time.Second, 1000, 0, 100) // every retry fails, first attempts succeed
		if got := b.Rate(); got != 2 {
			t.Errorf("Rate() = %.1f with a quorum of failing retries, want the floor, 2", got)
		}
		feed(ctx, b, time.Second, 1000, 5, 5) // half of a quorum's worth succeed
		if got := b.Rate(); got < 90 || got > 110 {
			t.Errorf("Rate() = %.1f with half of ten retries succeeding, want about half of 200", got)
		}
	})
}

// A turn given back (Cancel) is the next retry's: with every token
// reserved, a cancelled wait lets the next retry go in its place, not
// after it.
func TestAdaptiveCancelGivesTheTurnBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 1, 10, 500*time.Millisecond) // 10 retries/s, a bucket of 1
		b.ReserveRetry(ctx, time.Hour)                   // the bucket's one token
		res := b.ReserveRetry(ctx, time.Hour)
		if !res.OK || res.Delay != 100*time.Millisecond || res.Cancel == nil {
			t.Fatalf("second ReserveRetry() = %+v, want a 100ms wait that can be cancelled", res)
		}
		res.Cancel()
		if next := b.ReserveRetry(ctx, time.Hour); next.Delay != 100*time.Millisecond {
			t.Errorf("after the cancel, the next retry waits %v, want the cancelled one's 100ms", next.Delay)
		}
	})
}

// A retry past the bucket's tokens waits its turn, up to maxWait; beyond
// it, it is refused.
func TestAdaptivePacesThenRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 1, 10, 500*time.Millisecond) // a quiet client: 10 retries/s, a bucket of 1
		if wait, ok := turn(b.ReserveRetry(ctx, time.Hour)); !ok || wait != 0 {
			t.Fatalf("first ReserveRetry() = %v, %v, want at once", wait, ok)
		}
		var waits []time.Duration
		for {
			wait, ok := turn(b.ReserveRetry(ctx, time.Hour))
			if !ok {
				break
			}
			waits = append(waits, wait)
		}
		if len(waits) != 5 || waits[0] != 100*time.Millisecond || waits[4] != 500*time.Millisecond {
			t.Errorf("waits = %v, want 100ms apart up to the 500ms maxWait", waits)
		}
		if allowNow(b, ctx) {
			t.Error("ReserveRetry(0) ok with every token reserved")
		}
		time.Sleep(700 * time.Millisecond)
		if !allowNow(b, ctx) {
			t.Error("ReserveRetry(0) refused after the reserved turns passed")
		}
	})
}

func TestAdaptiveConcurrent(t *testing.T) {
	b := newAdaptive(t, 0.5, 100, 10*time.Millisecond)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range 2000 {
				b.RecordAttempt(t.Context(), 1+i%2, i%3 != 0)
				b.ReserveRetry(t.Context(), time.Hour)
			}
		})
	}
	wg.Wait()
	if got := b.Rate(); got <= 0 {
		t.Errorf("Rate() = %v, want positive", got)
	}
}

func TestNewAdaptiveRejectsBadArguments(t *testing.T) {
	for _, args := range []struct {
		ratio, min float64
		wait       time.Duration
	}{{0, 1, time.Second}, {1.5, 1, time.Second}, {0.2, -1, time.Second}, {0.2, 1, 0}} {
		if _, err := budget.NewAdaptive(args.ratio, args.min, args.wait); err == nil {
			t.Errorf("NewAdaptive(%v, %v, %v) error = nil", args.ratio, args.min, args.wait)
		}
	}
}

// allowNow asks b for a retry that may not wait.
func allowNow(b *budget.Adaptive, ctx context.Context) bool {
	_, ok := turn(b.ReserveRetry(ctx, 0))
	return ok
}

// The pace holds a retry past what the caller's deadline leaves: it goes
// after as long as the caller lets it wait, as debt, while recent retries succeed, and is refused while they
// fail; a hedge's maxWait of 0 never borrows.
func TestPacingUnderADeadline(t *testing.T) {
	for name, tc := range map[string]struct {
		ok, helpful bool
		maxWait     time.Duration
		want        bool
	}{
		"succeeding retries borrow":   {true, true, 100 * time.Millisecond, true},
		"failing retries are refused": {false, false, 100 * time.Millisecond, false},
		"a hedge never borrows":       {true, true, 0, false},
	} {
		p, err := budget.NewPacing(1, 2, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		var good int64
		if tc.helpful {
			good = 20
		}
		rate := p.Rate(0, 20, good, time.Second) // 2 a second: the floor
		p.Reserve(now, rate, time.Hour)          // the one token
		wait, ok := turn(p.Reserve(now, rate, tc.maxWait))
		if want := map[bool]time.Duration{true: tc.maxWait}[tc.want]; ok != tc.want || wait != want {
			t.Errorf("%s: Reserve = %v, %v; want %v after %v, the most the deadline lets it wait", name, wait, ok, tc.want, want)
		}
		if wait, ok := turn(p.Reserve(now, rate, time.Hour)); !ok || wait <= 500*time.Millisecond && tc.want {
			t.Errorf("%s: the next retry waits %v, %v; want longer than 500ms after a borrow", name, wait, ok)
		}
	}
}

// While most attempts fail, first attempts are held; a call with a
// deadline is not, while recent retries succeed (an overload's lulls), and
// is, while they fail (an outage).
func TestHoldFirstUnderADeadline(t *testing.T) {
	for name, tc := range map[string]struct {
		retriesWork, deadline, held bool
	}{
		"no deadline: held":                   {true, false, true},
		"a deadline, retries succeeding: not": {true, true, false},
		"a deadline, retries failing: held":   {false, true, true},
	} {
		synctest.Test(t, func(t *testing.T) {
			ctx := t.Context()
			b := newAdaptive(t, 0.5, 1, time.Second)
			for range 30 { // most attempts fail: first attempts
				b.RecordAttempt(ctx, 1, false)
			}
			for range 20 { // a quorum of retries
				b.RecordAttempt(ctx, 2, tc.retriesWork)
			}
			b.HoldFirst(ctx, 0) // a probe may go
			if tc.deadline {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 250*time.Millisecond)
				defer cancel()
			}
			wait, again := b.HoldFirst(ctx, 0)
			if held := wait > 0 || again; held != tc.held {
				t.Errorf("%s: HoldFirst = %v, %v; want held %v", name, wait, again, tc.held)
			}
		})
	}
}

// When the hold ends, the calls it held do not all go in the same tenth
// of a second: they drain at the rate the provider last answered. (Before
// this rule, the held calls of a small provider's collapse went together
// as it came back, overfilled a window, and collapsed it again: recovery
// took 1.3–1.6 s after the spike against no retry's 1.0–1.1 s.)
func TestHeldCallsDrainWhenTheHoldEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 0.5, 1, time.Second)
		for range 40 { // most attempts fail: a collapse; 10 succeed
			b.RecordAttempt(ctx, 1, false)
		}
		for range 10 {
			b.RecordAttempt(ctx, 1, true)
		}
		const held = 30
		for i := range held { // every call is held once
			if wait, again := b.HoldFirst(ctx, 0); wait == 0 && !again && i > 0 {
				t.Fatalf("call %d was not held: the hold is not on", i)
			}
		}
		time.Sleep(50 * time.Millisecond)
		for range 30 { // the provider answers as many again: the hold ends
			b.RecordAttempt(ctx, 1, true)
		}
		time.Sleep(60 * time.Millisecond)
		gone := 0
		for range held { // each held call asks again, all at once
			if wait, again := b.HoldFirst(ctx, 50*time.Millisecond); wait == 0 && !again {
				gone++
			}
		}
		if b.Holding() {
			t.Fatal("still holding once as many attempts succeed as fail")
		}
		if gone == 0 || gone > held/2 {
			t.Errorf("%d of %d held calls went at once when the hold ended; want some, and at most half", gone, held)
		}
	})
}

// turn is a budget's reservation as its delay and whether it is OK.
func turn(res core.Reservation) (time.Duration, bool) { return res.Delay, res.OK }

// A herd's retries ask one by one as its failures are counted, and each
// count raises the rate: their turns come one after the other, each at
// least a turn after the one before, never all promised for the moment
// the debt so far would be repaid at the last rate (before they were
// spaced, 341 of 493 granted turns fell due in the same 10 ms, and the
// herd's retries met the provider together). Here the first turn, promised
// at the floor rate before the herd was read as one, holds the rest behind
// it: most of the herd's retries are refused, as they are in the storms.
func TestAdaptiveSpacesAHerdsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 0.5, 1, time.Second)
		time.Sleep(3 * time.Second) // a quiet client: what comes next is a herd
		per := map[time.Duration]int{}
		granted := 0
		for range 500 {
			b.RecordAttempt(ctx, 1, false)
			if res := b.ReserveRetry(ctx, time.Hour); res.OK {
				granted++
				per[res.Delay.Truncate(10*time.Millisecond)]++
			}
		}
		most := 0
		for _, n := range per {
			most = max(most, n)
		}
		t.Logf("%d of 500 granted, at most %d due in the same 10 ms", granted, most)
		if granted == 0 || most > 5 {
			t.Errorf("%d of the herd's 500 retries granted, %d of them due in the same 10 ms; want some, never more than 5 together",
				granted, most)
		}
	})
}

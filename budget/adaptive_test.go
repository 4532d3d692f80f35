package budget

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func newTestAdaptive(t *testing.T) *Adaptive {
	t.Helper()
	b, err := NewAdaptive(DefaultSetting())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// admitted is how many of n first attempts the budget lets go.
func admitted(b *Adaptive, n int) int {
	ok := 0
	for range n {
		if b.Reserve(context.Background(), 1, 0).OK {
			ok++
		}
	}
	return ok
}

// Retries are throttled as first attempts are: a retry is a request.
func TestRetriesAreThrottledToo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTestAdaptive(t)
		ctx := context.Background()
		for range 992 {
			b.RecordAttempt(ctx, 1, false)
		}
		// p = (992 − 8)/(992 + 8): about two retries in a hundred are
		// not refused.
		went := 0
		for range 1000 {
			if res := b.Reserve(ctx, 2, time.Hour); res.OK {
				went++
			}
		}
		if went > 50 {
			t.Errorf("%d of 1000 retries went at a throttle of 0.984, want about 16", went)
		}
	})
}

// While the provider refuses most requests, the calls sent fall to about
// √(offered·K·accepts): the throttle's own refusals are not requests, so
// p = 1 − K·accepts/sent, and sent = offered·(1 − p). Once it accepts again, the throttle lifts within a window, though
// the calls it refused meanwhile were many: they are never counted
// (go-zero's breaker, which counted them, stayed open for good).
func TestThrottleFollowsAcceptsAndForgetsItsOwnRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTestAdaptive(t)
		ctx := context.Background()
		if got := admitted(b, 1000); got != 1000 {
			t.Fatalf("with no answers yet, %d of 1000 first attempts went, want all", got)
		}
		// A collapse: 1000 calls a second come, the provider accepts 50 a
		// second of what is sent. Play 3 s in steps of 10ms.
		sent, accepted := 0, 0
		for step := range 300 {
			n := admitted(b, 10)
			sent += n
			for i := range n {
				_ = i
				ok := accepted < (step+1)/2 // 50 a second at most
				if ok {
					accepted++
				}
				b.RecordAttempt(ctx, 1, ok)
			}
			time.Sleep(10 * time.Millisecond)
		}
		// √(1000·2·50) ≈ 316 a second, after the first second's read.
		if sent > 1300 || sent < 700 {
			t.Errorf("%d of 3000 calls sent into the collapse (%d accepted), want about 1000 + 2·316", sent, accepted)
		}
		if p := b.Throttle(); p < 0.6 || p > 0.75 {
			t.Errorf("throttle %v in the collapse, want about 1 − 316/1000", p)
		}
		// The provider is back: everything sent is accepted.
		for range 100 {
			for range admitted(b, 10) {
				b.RecordAttempt(ctx, 1, true)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if p := b.Throttle(); p != 0 {
			t.Errorf("throttle %v a second after the provider came back, want 0", p)
		}
		if got := admitted(b, 100); got != 100 {
			t.Errorf("%d of 100 went after the return, want all", got)
		}
	})
}

// Retries go at Ratio of the first attempts plus the floor, spaced by the
// token bucket: a herd of failures is spread, and a retry that would wait
// past MaxWait is refused.
func TestRetriesArePacedAtARatioOfFirstAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTestAdaptive(t)
		ctx := context.Background()
		for i := range 200 { // a herd: 200 first attempts at once, half refused (not throttled yet)
			b.RecordAttempt(ctx, 1, i%2 == 0)
		}
		// 0.5·200/s + 1/s = 101 retries a second, a burst of one.
		var last time.Duration
		granted := 0
		for range 200 {
			res := b.Reserve(ctx, 2, time.Hour)
			if !res.OK {
				break
			}
			if res.Delay < last {
				t.Fatalf("retry %d due at %v, before the one before it (%v)", granted, res.Delay, last)
			}
			last = res.Delay
			granted++
		}
		if granted < 95 || granted > 105 || last < 900*time.Millisecond {
			t.Errorf("%d retries granted, the last after %v; want about 101 spread over the MaxWait of 1s", granted, last)
		}
		if res := b.Reserve(ctx, 2, 5*time.Millisecond); res.OK {
			t.Errorf("a retry that may wait 5ms was granted after %v", res.Delay)
		}
	})
}

// A cancelled turn is given back: the next retry gets it.
func TestCancelGivesTheTurnBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTestAdaptive(t)
		ctx := context.Background()
		first := b.Reserve(ctx, 2, time.Second)
		second := b.Reserve(ctx, 2, time.Second)
		if !first.OK || first.Delay != 0 || !second.OK || second.Delay != time.Second {
			t.Fatalf("at the floor of 1/s: %+v then %+v, want now then in 1s", first, second)
		}
		second.Cancel()
		if again := b.Reserve(ctx, 2, time.Second); !again.OK || again.Delay != time.Second {
			t.Errorf("after a Cancel: %+v, want the same turn, in 1s", again)
		}
	})
}

func TestAdaptiveIsSafeForConcurrentUse(t *testing.T) {
	b := newTestAdaptive(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				if res := b.Reserve(ctx, 1+i%2, time.Millisecond); res.OK && res.Cancel != nil && i%3 == 0 {
					res.Cancel()
				}
				b.RecordAttempt(ctx, 1+i%2, (g+i)%2 == 0)
				_ = b.Throttle()
			}
		})
	}
	wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.win.sum; s.requests > 8000 || s.accepts > s.requests || s.firsts > s.requests {
		t.Errorf("window sums %+v after 8000 answers, want consistent", s)
	}
}

// Accepted answers counted apart, a few at a time, are all in the window
// whenever it is read: none is lost, whatever the count at the read.
func TestAcceptedAnswersCountedApartAreNotLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		for _, accepted := range []int{1, foldEvery - 1, foldEvery, 3*foldEvery + 1} {
			b := newTestAdaptive(t)
			for range accepted {
				b.RecordAttempt(ctx, 1, true)
			}
			for range 2*accepted + 20 {
				b.RecordAttempt(ctx, 2, false)
			}
			// requests 3a + 20, accepts a: (3a + 20 − 2a − 8) / (3a + 28).
			want := float64(accepted+12) / float64(3*accepted+28)
			if p := b.Throttle(); p != want {
				t.Errorf("%d accepted: throttle %v, want %v", accepted, p, want)
			}
			b.mu.Lock()
			firsts := b.win.sum.firsts
			b.mu.Unlock()
			if firsts != int64(accepted) {
				t.Errorf("%d accepted first attempts: %d in the window", accepted, firsts)
			}
		}
	})
}

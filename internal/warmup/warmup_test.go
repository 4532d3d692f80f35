package warmup

import (
	"runtime"
	"testing"
)

// A new peak of goroutines after ForCalls leaves the heap where it was: the
// descriptors it needs were made by the warm-up. The control, a first peak
// half as high without it, leaves them behind, so the check can fail.
func TestForCallsReachesThePeakOfTheCalls(t *testing.T) {
	const calls, each = 1000, 3 // twice this, within the race detector's 8128 goroutines
	grown := func(calls int, warm bool) int64 {
		base := runtime.NumGoroutine()
		if warm {
			ForCalls(calls, 10, base, base+10*each)
		}
		before := Heap()
		goroutines(calls * each)
		return int64(Heap()) - int64(before)
	}
	if g := grown(calls, false); g < calls*each*100 {
		// The runtime keeps its peak for the process: a second run
		// (-count) finds it reached.
		t.Skipf("the control's peak of %d goroutines grew the heap %d B: this process has been past it before", calls*each, g)
	}
	if g := grown(2*calls, true); g > 64<<10 {
		t.Errorf("after ForCalls, a new peak of %d goroutines grew the heap %d B, want under 64 KiB", 2*calls*each, g)
	}
}

// Package warmup readies the runtime for a test that measures the heap
// around a peak of goroutines.
//
// The runtime keeps for good the descriptor of every goroutine it ever
// ran, and its list of them, which doubles whenever more are alive at once
// than ever before. A heap measured before a test's peak and after it
// grows by that much unless the runtime has reached a higher peak first.
// Plain goroutines parked on a channel reach it for a fraction of the cost
// of a round of the calls the test measures.
package warmup

import (
	"math"
	"runtime"
	"sync"
)

// ForCalls has the runtime reach, a quarter over, the peak of goroutines
// of n calls held open at once, as measured by a round of k of them:
// before goroutines were alive before that round, peak while its k calls
// were open. It returns when the goroutines it started have ended.
func ForCalls(n, k, before, peak int) {
	each := float64(max(peak-before, 0)) / float64(k)
	goroutines(int(math.Ceil(1.25*each*float64(n))) - (runtime.NumGoroutine() - before))
}

// goroutines has n more goroutines than now alive at once, then ends them
// all.
func goroutines(n int) {
	if n <= 0 {
		return
	}
	var started, ended sync.WaitGroup
	release := make(chan struct{})
	started.Add(n)
	ended.Add(n)
	for range n {
		go func() {
			defer ended.Done()
			started.Done()
			<-release
		}()
	}
	started.Wait()
	close(release)
	ended.Wait()
}

// Heap returns the live heap after a full collection.
func Heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

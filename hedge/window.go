package hedge

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Sizes of the latency window.
const (
	windowSize = 256 // recent successful attempts kept
	minSamples = 20  // before this many, the quantile is unknown
	recompute  = 16  // the quantile is recomputed every this many samples
)

// window holds the latencies of recent successful attempts and their
// quantile, recomputed every few samples so that reading it is one atomic
// load.
type window struct {
	q       float64
	mu      sync.Mutex
	samples [windowSize]time.Duration
	n       int
	cur     atomic.Int64 // the quantile, in ns; 0 until minSamples
}

func newWindow(q float64) *window { return &window{q: q} }

// record adds the latency of a successful attempt.
func (w *window) record(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples[w.n%windowSize] = d
	w.n++
	if w.n < minSamples || w.n%recompute != 0 {
		return
	}
	s := slices.Clone(w.samples[:min(w.n, windowSize)])
	slices.Sort(s)
	i := int(w.q*float64(len(s)) + 0.5) // nearest rank
	w.cur.Store(int64(s[min(max(i-1, 0), len(s)-1)]))
}

// quantile returns the latency quantile, or 0 while it is unknown.
func (w *window) quantile() time.Duration { return time.Duration(w.cur.Load()) }

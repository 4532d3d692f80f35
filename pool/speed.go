package pool

import (
	"math"
	"sync/atomic"
	"time"
)

// A deployment's speed is scored per kind of call, never by a call's
// total latency, which says how long the answers it happened to get were
// rather than how fast it is (a deployment sent the long prompts would look
// slow): a stream's by its time to first chunk, an Invoke's by the seconds
// per output token its answers took, from the usage its provider reports
// (its total latency when it reports none: a Runnable that counts no
// tokens answers in no tokens).
type speedKind int

const (
	perToken   speedKind = iota // Invoke and Batch: seconds per output token
	firstChunk                  // Stream: seconds to the first chunk
	speedKinds
)

// speeds are a deployment's scores, one per kind, each an exponentially
// weighted moving average that jumps to a slower sample at once (the peak),
// so a deployment that slows down is avoided at once and one that speeds up
// earns its traffic back over a few calls. Seconds, as float64 bits; 0 is
// unknown.
type speeds [speedKinds]atomic.Uint64

// speedWeight is the weight of a faster sample in the moving average.
const speedWeight = 0.1

// of returns the score of kind k, 0 when none is measured yet.
func (s *speeds) of(k speedKind) float64 { return math.Float64frombits(s[k].Load()) }

// observe folds a sample of kind k into its score.
func (s *speeds) observe(k speedKind, sample float64) {
	if !(sample > 0) || math.IsInf(sample, 0) {
		return
	}
	for {
		old := s[k].Load()
		prev, next := math.Float64frombits(old), sample
		if sample < prev {
			next = prev + speedWeight*(sample-prev)
		}
		if s[k].CompareAndSwap(old, math.Float64bits(next)) {
			return
		}
	}
}

// observeInvoke scores an Invoke that took took and answered output
// tokens (reported false: no usage came).
func (s *speeds) observeInvoke(took time.Duration, output int64, reported bool) {
	if reported && output > 0 {
		s.observe(perToken, took.Seconds()/float64(output))
		return
	}
	if !reported {
		s.observe(perToken, took.Seconds())
	}
}

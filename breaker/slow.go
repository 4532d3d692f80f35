package breaker

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// WithSlowCalls opens the circuit on a slow-call rate as well as on
// failures, as resilience4j's slowCallRateThreshold does, so that a
// brownout that answers late but without errors moves traffic elsewhere
// (a fallback's next candidate, a pool's other deployment). A call is slow
// when its first chunk comes more than threshold after the circuit let it
// through: a stream's first value, an Invoke's or a Batch's answer (a
// stream that ends with none is timed at its end). When at least minCalls
// calls ended within window and rate of them or more were slow, the
// circuit opens, however few failed. A slow call still gives the caller
// its answer, and counts as a failure in the circuit's Counts, so a
// half-open circuit's slow probe opens it again. The window's counts start
// over on every state change. threshold and window must be positive, rate
// more than 0 and at most 1, minCalls at least 1.
func WithSlowCalls(threshold time.Duration, rate float64, minCalls int, window time.Duration) Option {
	return func(c *config) {
		c.slow = &slowCalls{threshold: threshold, rate: rate, minCalls: minCalls, window: window}
	}
}

// errSlow is the outcome the circuit is told of a call that succeeded
// past the slow-call threshold: a failure of its counts, never the
// caller's error.
var errSlow = errors.New("breaker: slow call")

// slowCalls counts a window's calls and the slow ones among them.
type slowCalls struct {
	threshold time.Duration
	rate      float64
	minCalls  int
	window    time.Duration

	mu          sync.Mutex
	since       time.Time // when the current window began
	calls, slow int
}

func (s *slowCalls) validate() error {
	switch {
	case s.threshold <= 0 || s.window <= 0:
		return fmt.Errorf("breaker: New: WithSlowCalls threshold %v and window %v must be positive", s.threshold, s.window)
	case !(s.rate > 0 && s.rate <= 1):
		return fmt.Errorf("breaker: New: WithSlowCalls rate %v must be more than 0 and at most 1", s.rate)
	case s.minCalls < 1:
		return fmt.Errorf("breaker: New: WithSlowCalls minCalls %d must be at least 1", s.minCalls)
	}
	return nil
}

// record counts a call that ended at now, slow or not, and returns the
// outcome to tell the circuit: errSlow for a success that was slow.
func (s *slowCalls) record(now time.Time, first time.Duration, err error) error {
	slow := err == nil && first > s.threshold
	s.mu.Lock()
	if now.Sub(s.since) >= s.window {
		s.since, s.calls, s.slow = now, 0, 0
	}
	s.calls++
	if slow {
		s.slow++
	}
	s.mu.Unlock()
	if slow {
		return errSlow
	}
	return err
}

// tripped reports whether the window's slow calls are rate of its calls or
// more, with minCalls of them.
func (s *slowCalls) tripped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls >= s.minCalls && float64(s.slow) >= s.rate*float64(s.calls)
}

// reset starts the window over, on a state change.
func (s *slowCalls) reset() {
	s.mu.Lock()
	s.since, s.calls, s.slow = time.Time{}, 0, 0
	s.mu.Unlock()
}

package budget

import (
	"fmt"
	"math"
	"time"
)

// Setting is the law's parameters (see the package doc for each one's
// reason). Start from DefaultSetting and change what you must.
type Setting struct {
	// K is how many requests may be sent for each the provider accepts
	// before attempts are throttled: at least 1.
	K float64
	// Padding is how many refusals the throttle overlooks: at least 0.
	Padding float64
	// Ratio is the most retries per first attempt: in (0, 1].
	Ratio float64
	// Floor is the retries a second allowed whatever the first attempts:
	// finite, at least 0.
	Floor float64
	// Window is how long an answer counts: from 10ms to an hour.
	Window time.Duration
	// MaxWait is the longest a retry waits for its token: positive.
	MaxWait time.Duration
}

// DefaultSetting returns the setting of retry.RecommendedBudget.
func DefaultSetting() Setting {
	return Setting{K: 2, Padding: 8, Ratio: 0.5, Floor: 1, Window: time.Second, MaxWait: time.Second}
}

// check names the first parameter out of its range, for fn.
func (s Setting) check(fn string) error {
	switch {
	case !(s.K >= 1) || math.IsInf(s.K, 0):
		return fmt.Errorf("budget: %s: K is %v, must be finite and at least 1", fn, s.K)
	case !(s.Padding >= 0) || math.IsInf(s.Padding, 0):
		return fmt.Errorf("budget: %s: Padding is %v, must be finite and at least 0", fn, s.Padding)
	case !(s.Ratio > 0 && s.Ratio <= 1):
		return fmt.Errorf("budget: %s: Ratio is %v, must be in (0, 1]", fn, s.Ratio)
	case !(s.Floor >= 0) || math.IsInf(s.Floor, 0):
		return fmt.Errorf("budget: %s: Floor is %v, must be finite and at least 0", fn, s.Floor)
	case s.Window < 10*time.Millisecond || s.Window > time.Hour:
		return fmt.Errorf("budget: %s: Window is %v, must be from 10ms to 1h", fn, s.Window)
	case s.MaxWait <= 0:
		return fmt.Errorf("budget: %s: MaxWait is %v, must be positive", fn, s.MaxWait)
	}
	return nil
}

// counts are a window's answers: requests sent and answered, those
// accepted, and the first attempts among the requests.
type counts struct{ requests, accepts, firsts int64 }

// throttle is the probability with which an attempt is refused after the
// window c: max(0, (requests − K·accepts − Padding) / (requests + Padding)).
func (s Setting) throttle(c counts) float64 {
	r := float64(c.requests)
	return max(0, (r-s.K*float64(c.accepts)-s.Padding)/(r+s.Padding))
}

// retryRate is the retries a second allowed after the window c:
// Ratio · firsts / Window + Floor.
func (s Setting) retryRate(c counts) float64 {
	return s.Ratio*float64(c.firsts)/s.Window.Seconds() + s.Floor
}

// slots is how many slots a window holds, the oldest dropped as time goes.
const slots = 10

// window is the sliding window of counts: slots of Window/slots each,
// with their sum kept as they come and go. Its owner serializes the calls.
type window struct {
	start time.Time     // the zero of the slots' numbering (monotonic)
	slot  time.Duration // Window / slots
	cur   int64         // the number of the newest slot
	ring  [slots]counts // slot n is ring[n % slots]
	sum   counts        // the sum of the ring
}

func newWindow(now time.Time, w time.Duration) window {
	return window{start: now, slot: w / slots}
}

// advance drops the slots that have left the window by now.
func (w *window) advance(now time.Time) {
	n := int64(now.Sub(w.start) / w.slot)
	if n <= w.cur {
		return
	}
	if n-w.cur >= slots {
		w.ring, w.sum = [slots]counts{}, counts{}
	} else {
		for i := w.cur + 1; i <= n; i++ {
			old := &w.ring[i%slots]
			w.sum = counts{w.sum.requests - old.requests, w.sum.accepts - old.accepts, w.sum.firsts - old.firsts}
			*old = counts{}
		}
	}
	w.cur = n
}

// add counts k answers at now: to attempt n (1 for a first attempt),
// accepted or not.
func (w *window) add(now time.Time, n int, accepted bool, k int64) {
	w.advance(now)
	c := &w.ring[w.cur%slots]
	c.requests += k
	w.sum.requests += k
	if accepted {
		c.accepts += k
		w.sum.accepts += k
	}
	if n <= 1 {
		c.firsts += k
		w.sum.firsts += k
	}
}

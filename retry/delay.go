package retry

import (
	"math"
	"time"
)

// backoff returns the delay before retry number retry (1 for the first
// retry), given u drawn from [0, 1):
//
//	d = min(MaxBackoff, InitialBackoff × BackoffFactor^(retry−1))
//	delay = d × (1 − Jitter × u)
//
// The growth is computed in floating point and compared with the cap before
// converting back, so no retry number overflows. Jitter only subtracts, so
// the result is never negative and never above MaxBackoff.
func (c *RetryConfig) backoff(retry int, u float64) time.Duration {
	if c.InitialBackoff <= 0 || retry < 1 {
		return 0
	}
	factor := c.BackoffFactor
	if factor == 0 {
		factor = defaultBackoffFactor
	}
	limit := float64(c.MaxBackoff)
	d := float64(c.InitialBackoff) * math.Pow(factor, float64(retry-1))
	if !(d < limit) { // also catches +Inf
		d = limit
	}
	if c.Jitter > 0 {
		d *= 1 - c.Jitter*u
	}
	switch {
	case d <= 0:
		return 0
	case d >= limit:
		// float64(MaxBackoff) may round up past what a Duration holds.
		return c.MaxBackoff
	}
	return time.Duration(d)
}

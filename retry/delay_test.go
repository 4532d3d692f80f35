package retry

import (
	"math"
	"testing"
	"time"
)

func TestBackoffGrowthAndCap(t *testing.T) {
	c := RetryConfig{InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, BackoffFactor: 3}
	want := []time.Duration{100 * time.Millisecond, 300 * time.Millisecond, 900 * time.Millisecond, time.Second, time.Second}
	for i, w := range want {
		if got := c.backoff(i+1, 0.5); got != w {
			t.Errorf("backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
	c.Jitter = 1
	if got := c.backoff(4, 0.25); got != 750*time.Millisecond {
		t.Errorf("full jitter, u=0.25: backoff(4) = %v, want 750ms", got)
	}
}

func FuzzBackoff(f *testing.F) {
	f.Add(int64(time.Second), int64(30*time.Second), 2.0, 0.1, 1, 0.5)
	f.Add(int64(1), int64(math.MaxInt64), 1.0, 0.0, 1_000_000_000, 0.0)
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), 10.0, 1.0, 64, 0.999999)
	f.Add(int64(0), int64(0), 0.0, 0.0, 3, 0.3)
	f.Fuzz(func(t *testing.T, initial, maxB int64, factor, jitter float64, retry int, u float64) {
		c := RetryConfig{
			InitialBackoff: time.Duration(initial),
			MaxBackoff:     time.Duration(maxB),
			BackoffFactor:  factor,
			Jitter:         jitter,
		}
		if c.Validate() != nil || retry < 1 || retry > 1e9 || !(u >= 0 && u < 1) {
			t.Skip()
		}
		got := c.backoff(retry, u)
		if got < 0 || got > c.MaxBackoff {
			t.Fatalf("backoff(%d) = %v, outside [0, %v]", retry, got, c.MaxBackoff)
		}
		if jitter != 0 {
			return
		}
		// Without jitter the growth is exact: for factor 2 it is the
		// saturating doubling of InitialBackoff, checked in integers.
		if (factor == 0 || factor == 2) && initial < 1<<53 {
			want := c.InitialBackoff
			for i := 1; i < retry && want < c.MaxBackoff; i++ {
				if want > c.MaxBackoff/2 {
					want = c.MaxBackoff // doubling would pass the cap (or overflow)
					break
				}
				want *= 2
			}
			want = min(want, c.MaxBackoff)
			if got != want {
				t.Fatalf("backoff(%d) = %v, want %v", retry, got, want)
			}
		}
		// And it never shrinks from one retry to the next.
		if retry < 1e9 && c.backoff(retry+1, u) < got {
			t.Fatalf("backoff(%d) = %v < backoff(%d) = %v", retry+1, c.backoff(retry+1, u), retry, got)
		}
	})
}

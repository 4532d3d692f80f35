package retry

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/internal/mock"
)

// Jitter takes its share off the computed delay: with u = 0.5 and Jitter
// 0.5, a 1s backoff becomes 750ms and a 2s one 1.5s.
func TestInvokeAppliesJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Fail(errFlaky), mock.Fail(errFlaky), mock.OK("ok"))
		cfg := RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Minute, Jitter: 0.5}
		r, err := New(inner, cfg, withRandom(func() float64 { return 0.5 }))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		if got, want := time.Since(start), 2250*time.Millisecond; got != want {
			t.Errorf("took %v, want %v", got, want)
		}
	})
}

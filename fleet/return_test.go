package fleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/steadfast-go/steadfast/fleet"
)

// admitted counts the turns l gives, with no wait, to calls made one after
// another for d.
func admitted(t *testing.T, l *fleet.Limiter, d time.Duration) int {
	t.Helper()
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		_, ok, err := parts(l.Reserve(context.Background(), 1, 0))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			n++
		}
		time.Sleep(200 * time.Microsecond)
	}
	return n
}

// Two replicas share 200 tokens a second, half each when Redis is away.
// One comes back while the other, its go-redis client not yet dialling
// again, still spends its half unseen: the one back gets its half, not
// the whole rate on top of the other's. When the other is seen, by any
// call, the one back gets the whole rate again.
func TestAReplicaBackCountsTheOnesNotYetBack(t *testing.T) {
	s := startServer(t)
	p := startProxy(t, s.addr())
	key := uniqueKey(t)
	const rate, burst = 200, 10
	back := newLimiter(t, dial(t, p.addr()), key, rate, burst, fleet.WithFallbackShare(0.5))
	other := newLimiter(t, dial(t, s.addr()), key, rate, burst, fleet.WithFallbackShare(0.5))

	p.held.Store(true)
	waitFor(t, 2*time.Second, "the limiter did not fall back from a held Redis", func() bool {
		_, _, _ = parts(back.Reserve(context.Background(), 1, 0))
		return back.Degraded()
	})
	p.held.Store(false)
	waitFor(t, 2*time.Second, "the limiter did not come back", func() bool {
		_, _, _ = parts(back.Reserve(context.Background(), 1, 0))
		return !back.Degraded()
	})

	alone := admitted(t, back, 500*time.Millisecond)
	if _, _, err := parts(other.Reserve(context.Background(), 1, 0)); err != nil {
		t.Fatal(err)
	}
	seen := admitted(t, back, 500*time.Millisecond)
	t.Logf("turns in the half second after coming back: %d with the other replica unseen, %d once seen", alone, seen)
	// Half the rate for half a second is 50 turns, the burst 10 more.
	if alone > 50+burst+10 {
		t.Errorf("%d turns with the other replica unseen, want at most %d: its half of the rate is not counted", alone, 50+burst+10)
	}
	if alone < 40 {
		t.Errorf("%d turns with the other replica unseen, want about 50", alone)
	}
	if seen < 85 {
		t.Errorf("%d turns once the other replica was seen, want about 100: the whole rate", seen)
	}
}

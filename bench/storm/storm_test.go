package storm

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/bench"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestProviderCapacityAndOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := Scenario{Capacity: 1000, OutageStart: time.Second, OutageEnd: 2 * time.Second}
		p := newProvider(sc, time.Now())
		served := 0
		for range 100 { // 100 requests at once: only the burst (10) is served
			if p.request(t.Context()) == nil {
				served++
			}
		}
		if served != 10 {
			t.Errorf("served %d of an instant burst of 100, want the bucket's 10", served)
		}
		time.Sleep(1500 * time.Millisecond) // inside the outage
		if err := p.request(t.Context()); !errors.Is(err, ErrOverloaded) {
			t.Errorf("request during the outage = %v, want ErrOverloaded", err)
		}
		time.Sleep(time.Second) // after it
		if err := p.request(t.Context()); err != nil {
			t.Errorf("request after the outage = %v, want served", err)
		}
	})
}

// A metastable provider collapses as soon as a window holds more than it
// can serve, serves a tenth of its capacity while collapsed, and recovers
// only once every window for a second has held at most RecoverShare of
// its capacity: a load at 90 % keeps a deep collapse (40 %) down.
func TestMetastableProviderRecoversWithHysteresis(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, tc := range []struct {
			share     float64
			low       int // requests every 10ms after the trigger
			recovered bool
		}{{1, 9, true}, {0.4, 9, false}, {0.4, 3, true}} {
			sc := Scenario{Duration: 3 * time.Second, Capacity: 1000, SpikeStart: 0, SpikeEnd: 100 * time.Millisecond, SpikeFactor: 2,
				Metastable: true, CollapsedShare: 0.1, RecoverShare: tc.share}
			p := newProvider(sc, time.Now())
			offer := func(perTick int, d time.Duration) (served int) {
				for range d / (10 * time.Millisecond) {
					for range perTick {
						if p.request(t.Context()) == nil {
							served++
						}
					}
					time.Sleep(10 * time.Millisecond)
				}
				return served
			}
			offer(15, 100*time.Millisecond) // 150 in a window of 100: collapsed
			if !p.down() {
				t.Fatal("not collapsed by a window over capacity")
			}
			if served := offer(tc.low, time.Second); served > 110 || !p.down() {
				t.Fatalf("share %v: served %d in the second after the trigger, down %v; want about a tenth of the capacity (100), down", tc.share, served, p.down())
			}
			offer(tc.low, 1500*time.Millisecond)
			var res Result
			p.summarise(&res)
			if res.Recovered != tc.recovered {
				t.Errorf("share %v, %d a window: recovered %v, want %v", tc.share, 10*tc.low, res.Recovered, tc.recovered)
			}
			if tc.recovered && (res.RecoveredAfter < time.Second || res.RecoveredAfter > 1100*time.Millisecond) {
				t.Errorf("share %v: recovered %v after the trigger, want a second: the windows after it were all low", tc.share, res.RecoveredAfter)
			}
		}
	})
}

// A window over capacity collapses the provider again after it recovered.
func TestMetastableProviderCollapsesAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := Scenario{Duration: 5 * time.Second, Capacity: 1000, Metastable: true, CollapsedShare: 0.1}
		p := newProvider(sc, time.Now())
		for range 101 {
			_ = p.request(t.Context())
		}
		if !p.down() {
			t.Fatal("not collapsed by 101 requests in a window of 100")
		}
		time.Sleep(1200 * time.Millisecond)
		_ = p.request(t.Context())
		if p.down() {
			t.Fatal("still collapsed after a quiet second")
		}
		for range 101 {
			_ = p.request(t.Context())
		}
		if !p.down() {
			t.Error("not collapsed again by a window over capacity")
		}
	})
}

// The synchronized start sends a herd at once (open loop) or every
// client's first call at once (closed loop), and Sized scales the
// provider and its load together.
func TestSynchronizedAndSized(t *testing.T) {
	open := Scenario{Name: "outage", Rate: 1600, Capacity: 2000}.Synchronized().Sized(4)
	if open.Name != "sync-outage" || open.Herd != 1600 || open.Rate != 6400 || open.Capacity != 8000 {
		t.Errorf("open loop: %+v, want sync-outage, a herd of 1600, 6400/s against 8000/s", open)
	}
	closed := Scenario{Name: "closed", Capacity: 1000, Closed: closedShape}.Synchronized().Sized(0.25)
	if !closed.Closed.Synchronized || closed.Closed.Clients != 50 || closed.Closed.Slots != 5 || closed.Capacity != 250 {
		t.Errorf("closed loop: %+v %+v, want synchronized, 50 clients, 5 slots, 250/s", closed, *closed.Closed)
	}
	if closedShape.Synchronized || closedShape.Clients != 200 {
		t.Error("Synchronized or Sized changed the shared shape")
	}
}

func TestRunCountsCallsAndAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := Scenario{Name: "t", Duration: time.Second, Rate: 500, Capacity: 10000}
		res := Run(context.Background(), sc, bench.NoRetry(), 1)
		again := Run(context.Background(), sc, bench.NoRetry(), 1)
		if res.Calls < 400 || res.Calls > 600 || res.Calls != again.Calls {
			t.Errorf("calls = %d then %d, want about 500, the same for one seed", res.Calls, again.Calls)
		}
		if res.Attempts != res.Calls || res.Success != res.Calls {
			t.Errorf("attempts, successes = %d, %d, want %d each", res.Attempts, res.Success, res.Calls)
		}
	})
}

// Slowed makes the closed-loop provider serve as many times fewer requests
// a second as its requests take longer, under the same load.
func TestSlowed(t *testing.T) {
	sc := ClosedScenarios[2].Sized(0.25).Slowed(5)
	if sc.Closed.Service != 100*time.Millisecond || sc.Closed.Think != 1250*time.Millisecond || sc.Capacity != 50 {
		t.Errorf("Slowed(5): service %v, think %v, capacity %v; want 100ms, 1.25s, 50/s", sc.Closed.Service, sc.Closed.Think, sc.Capacity)
	}
	if open := Scenarios[0].Slowed(5); open.Capacity != Scenarios[0].Capacity {
		t.Errorf("Slowed changed an open-loop scenario's capacity")
	}
}

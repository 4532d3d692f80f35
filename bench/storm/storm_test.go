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

// A collapsed provider works its backlog off at its capacity less the
// load offered to it: never while that load is above its capacity, soon
// once the load falls.
func TestMetastableProviderWorksOffItsBacklog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := Scenario{Duration: 2 * time.Second, Capacity: 1000, OutageStart: 0, OutageEnd: 100 * time.Millisecond,
			Metastable: true, CollapsedShare: 0.3}
		p := newProvider(sc, time.Now())
		offer := func(perTick int, d time.Duration) {
			for range d / (10 * time.Millisecond) {
				for range perTick {
					_ = p.request(t.Context())
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		offer(10, 100*time.Millisecond) // the trigger: a backlog of 100
		offer(15, 300*time.Millisecond) // 1500/s, above capacity: it grows to 250
		if !p.down() {
			t.Fatal("recovered while the offered load was above the capacity")
		}
		offer(5, 300*time.Millisecond) // 500/s: worked off at 500/s, 150 in 300ms
		if !p.down() {
			t.Fatal("recovered with 100 requests of backlog left")
		}
		offer(5, 300*time.Millisecond)
		if p.down() {
			t.Fatal("still collapsed once the backlog was worked off")
		}
		var res Result
		p.summarise(&res)
		if !res.Recovered || res.RecoveredAfter < 750*time.Millisecond || res.RecoveredAfter > 850*time.Millisecond {
			t.Errorf("recovered %v, %v after the trigger, want about 800ms: 250 requests at 500/s from 300ms after it", res.Recovered, res.RecoveredAfter)
		}
	})
}

// Without load after the trigger the backlog goes at the full capacity.
func TestCollapseEndsWithoutLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := Scenario{Duration: time.Second, Capacity: 1000, OutageStart: 0, OutageEnd: 100 * time.Millisecond,
			Metastable: true, CollapsedShare: 0.3}
		p := newProvider(sc, time.Now())
		for range 200 {
			_ = p.request(t.Context())
		}
		time.Sleep(time.Second)
		var res Result
		p.summarise(&res)
		if !res.Recovered || res.RecoveredAfter != 200*time.Millisecond {
			t.Errorf("recovered %v, %v after the trigger, want 200ms: 200 requests at 1000/s", res.Recovered, res.RecoveredAfter)
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

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

func TestMetastableProviderRecoversOnlyBelowCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := Scenario{Capacity: 1000, OutageStart: 0, OutageEnd: 100 * time.Millisecond, Metastable: true, CollapsedShare: 0.3}
		p := newProvider(sc, time.Now())
		// Offered load above capacity, 20 requests per 10ms = 2000/s, during
		// the trigger and after it.
		for range 30 {
			for range 20 {
				_ = p.request(t.Context())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if !p.down() {
			t.Fatal("recovered while offered load was twice the capacity")
		}
		// Offered load below capacity: 5 per 10ms = 500/s.
		for range 30 {
			for range 5 {
				_ = p.request(t.Context())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if p.down() {
			t.Error("still collapsed with offered load at half the capacity")
		}
	})
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

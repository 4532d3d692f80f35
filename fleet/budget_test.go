package fleet_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadfast-go/steadfast/budget"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fleet"
	"github.com/steadfast-go/steadfast/retry"
)

func newBudget(t testing.TB, c redis.UniversalClient, key string, opts ...fleet.BudgetOption) *fleet.Budget {
	t.Helper()
	b, err := fleet.NewBudget(c, key, append([]fleet.BudgetOption{fleet.WithLogger(quiet)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestNewBudgetRejectsBadArguments(t *testing.T) {
	good := unreachable(t)
	for _, tc := range []struct {
		name   string
		client redis.UniversalClient
		key    string
		opts   []fleet.BudgetOption
		want   string
	}{
		{"nil client", nil, "k", nil, "client is nil"},
		{"empty key", good, "", nil, "key is empty"},
		{"zero sync", good, "k", []fleet.BudgetOption{fleet.WithSyncInterval(0)}, "WithSyncInterval(0s)"},
		{"sync past the window", good, "k", []fleet.BudgetOption{fleet.WithSyncInterval(2 * time.Second)}, "WithSyncInterval(2s)"},
		{"bad setting", good, "k", []fleet.BudgetOption{fleet.WithSetting(budget.Setting{K: 2, Window: time.Second, MaxWait: time.Second})}, "Ratio is 0"},
		{"negative timeout", good, "k", []fleet.BudgetOption{fleet.WithTimeout(-time.Second)}, "WithTimeout(-1s)"},
	} {
		b, err := fleet.NewBudget(tc.client, tc.key, tc.opts...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewBudget() error = %v, want one naming %q", tc.name, err, tc.want)
		}
		if b != nil {
			b.Close()
		}
	}
}

// The fleet's retries are one budget's: with no first attempts answered,
// the floor of one retry a second is the fleet's, split between its two
// replicas, where a budget alone has it all.
func TestBudgetSplitsTheFloorAcrossTheFleet(t *testing.T) {
	c := client(t)
	key := uniqueKey(t)
	one := newBudget(t, c, key, fleet.WithSyncInterval(10*time.Millisecond))
	other := newBudget(t, c, key, fleet.WithSyncInterval(10*time.Millisecond))
	alone := newBudget(t, c, uniqueKey(t), fleet.WithSyncInterval(10*time.Millisecond))
	time.Sleep(50 * time.Millisecond) // a few exchanges
	ctx := t.Context()
	for _, b := range []*fleet.Budget{one, other, alone} {
		if _, ok := turn(b.Reserve(ctx, 2, time.Hour)); !ok {
			t.Fatal("the first retry, from a full bucket, was refused")
		}
	}
	// Alone, the next retry is a second away; in the fleet, two.
	if wait, ok := turn(alone.Reserve(ctx, 2, time.Hour)); !ok || wait < 900*time.Millisecond {
		t.Errorf("alone: Reserve(a retry) = %v, %v; want a wait of about 1s", wait, ok)
	}
	if wait, ok := turn(one.Reserve(ctx, 2, time.Hour)); ok {
		t.Errorf("in a fleet of two: Reserve(a retry) = %v, true; want a refusal (2s, past the MaxWait of 1s)", wait)
	}
	if one.Degraded() || alone.Degraded() {
		t.Error("a budget fell back with Redis up")
	}
}

// Without Redis, the Budget paces retries locally, and Close still ends
// its goroutine (goleak checks).
func TestBudgetWithoutRedisDecidesLocally(t *testing.T) {
	b := newBudget(t, unreachable(t), "k", fleet.WithSyncInterval(10*time.Millisecond))
	deadline := time.Now().Add(2 * time.Second)
	for !b.Degraded() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !b.Degraded() {
		t.Fatal("Degraded() = false with Redis unreachable")
	}
	if !allowNow(b, t.Context()) {
		t.Error("the local budget refused the first retry from its full bucket")
	}
	if err := b.Close(); err != nil {
		t.Error(err)
	}
}

// allowNow asks b for a retry that may not wait.
func allowNow(b retry.Budget, ctx context.Context) bool {
	_, ok := turn(b.Reserve(ctx, 2, 0))
	return ok
}

// The Budget throttles first attempts by the law over the whole fleet's
// answers: a replica whose own first attempts all succeeded throttles as
// much as the one that saw the provider refuse, once they have exchanged.
func TestBudgetThrottlesByTheFleetsAnswers(t *testing.T) {
	c := client(t)
	key := uniqueKey(t)
	refused := newBudget(t, c, key, fleet.WithSyncInterval(10*time.Millisecond))
	healthy := newBudget(t, c, key, fleet.WithSyncInterval(10*time.Millisecond))
	ctx := t.Context()
	for range 300 {
		refused.RecordAttempt(ctx, 1, false)
	}
	for range 50 {
		healthy.RecordAttempt(ctx, 1, true)
	}
	// 350 requests, 50 accepted: (350 − 100 − 8) / (350 + 8).
	want := 242.0 / 358
	waitFor(t, 2*time.Second, "the fleet's throttle", func() bool {
		return math.Abs(healthy.Throttle()-want) < 1e-9 && math.Abs(refused.Throttle()-want) < 1e-9
	})
	went := 0
	for range 1000 {
		if healthy.Reserve(ctx, 1, 0).OK {
			went++
		}
	}
	if went < 250 || went > 420 {
		t.Errorf("%d of 1000 first attempts went at a throttle of %.2f, want about 324", went, want)
	}
}

// Without Redis, the Budget throttles by this process's own answers.
func TestBudgetThrottlesLocallyWithoutRedis(t *testing.T) {
	b := newBudget(t, unreachable(t), "k", fleet.WithSyncInterval(10*time.Millisecond))
	waitFor(t, 2*time.Second, "the Budget falls back", b.Degraded)
	ctx := t.Context()
	if p := b.Throttle(); p != 0 {
		t.Fatalf("Throttle() = %v before any answer, want 0", p)
	}
	for range 18 {
		b.RecordAttempt(ctx, 1, false)
	}
	if p := b.Throttle(); math.Abs(p-10.0/26) > 1e-9 {
		t.Errorf("Throttle() = %v after 18 refusals, want (18 − 8)/(18 + 8)", p)
	}
}

// turn is a budget's reservation as its delay and whether it is OK.
func turn(res core.Reservation) (time.Duration, bool) { return res.Delay, res.OK }

package fleet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
		{"bad pacing", good, "k", []fleet.BudgetOption{fleet.WithPacing(0, 1, time.Second)}, "ratio is 0"},
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

// record makes n first attempts and the given retries, all failed.
func record(b *fleet.Budget, firsts, failedRetries int) {
	for range firsts {
		b.RecordAttempt(context.Background(), 1, false)
	}
	for range failedRetries {
		b.RecordAttempt(context.Background(), 2, false)
	}
}

// A replica whose own retries never failed still slows to the fleet's
// pace when the other replica's retries all fail: it learns from them.
func TestBudgetLearnsFromTheFleet(t *testing.T) {
	c := client(t)
	key := uniqueKey(t)
	failing := newBudget(t, c, key, fleet.WithSyncInterval(10*time.Millisecond))
	learning := newBudget(t, c, key, fleet.WithSyncInterval(10*time.Millisecond))
	alone := newBudget(t, c, uniqueKey(t), fleet.WithSyncInterval(10*time.Millisecond))
	record(failing, 100, 40)
	record(learning, 100, 0)
	record(alone, 100, 0)
	time.Sleep(50 * time.Millisecond) // a few exchanges
	ctx := t.Context()
	for _, b := range []*fleet.Budget{learning, alone} {
		if _, ok := turn(b.ReserveRetry(ctx, time.Hour)); !ok {
			t.Fatal("the first retry, from a full bucket, was refused")
		}
	}
	// Alone, 100 first attempts a second allow 50 retries a second: the
	// next is 20 ms away. In the fleet, whose retries all fail, the floor
	// of 1 a second is split between two replicas: 2 s, past the 1 s wait.
	if wait, ok := turn(alone.ReserveRetry(ctx, time.Hour)); !ok || wait > 100*time.Millisecond {
		t.Errorf("alone: ReserveRetry() = %v, %v; want a short wait", wait, ok)
	}
	if wait, ok := turn(learning.ReserveRetry(ctx, time.Hour)); ok {
		t.Errorf("in the failing fleet: ReserveRetry() = %v, true; want a refusal", wait)
	}
	if learning.Degraded() || alone.Degraded() {
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
	_, ok := turn(b.ReserveRetry(ctx, 0))
	return ok
}

// The Budget holds first attempts back as the in-process budget does, on
// this process's own attempts, whether or not Redis answers.
func TestBudgetHoldsFirstAttemptsWhileMostFail(t *testing.T) {
	b := newBudget(t, unreachable(t), "k", fleet.WithPacing(0.5, 1, time.Second))
	ctx := t.Context()
	if d, again := b.HoldFirst(ctx, 0); d != 0 || again {
		t.Fatalf("HoldFirst() = %v, %v before any attempt, want 0, false", d, again)
	}
	for range 200 { // an outage: every first attempt fails, and retries are asked for
		b.RecordAttempt(ctx, 1, false)
		b.ReserveRetry(ctx, 0)
	}
	// Probes go at an eighth of the first attempts' rate: the first held
	// attempts get turns a few milliseconds apart, the later ones ask again.
	if !heldUntilAskedAgain(func() (time.Duration, bool) { return b.HoldFirst(ctx, 0) }) {
		t.Error("HoldFirst() never answered to ask again within 100ms while every attempt fails")
	}
	if d, again := b.HoldFirst(ctx, time.Second); d != 0 || again {
		t.Errorf("HoldFirst() = %v, %v for an attempt held for maxWait already, want 0, false", d, again)
	}
}

// heldUntilAskedAgain asks hold for new first attempts until one is told
// to ask again within 100ms, and reports whether one was, every answer
// before it being a wait of at most 100ms for a turn.
func heldUntilAskedAgain(hold func() (time.Duration, bool)) bool {
	for range 1000 {
		d, again := hold()
		if d > 100*time.Millisecond {
			return false
		}
		if again {
			return d > 0
		}
	}
	return false
}

// turn is a budget's reservation as its delay and whether it is OK.
func turn(res core.Reservation) (time.Duration, bool) { return res.Delay, res.OK }

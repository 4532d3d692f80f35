package fleet_test

import (
	"context"
	"testing"
)

// A call's path through the Budget: recording an accepted answer is four
// atomic adds (the fleet's counts and the in-process law's), and asking
// for a first attempt an atomic load; Redis is only spoken to by the
// Budget's own goroutine.
func BenchmarkBudgetSuccessPath(b *testing.B) {
	budget := newBudget(b, client(b), uniqueKey(b))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		budget.RecordAttempt(ctx, 1, true)
	}
}

// One admission through the shared bucket: a Redis round trip.
func BenchmarkLimiterReserve(b *testing.B) {
	lim := newLimiter(b, client(b), uniqueKey(b), 1e9, 1_000_000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := parts(lim.Reserve(ctx, 1, 0)); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

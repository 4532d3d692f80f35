package budget_test

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/steadfast-go/steadfast/budget"
)

func ExampleNewAdaptive() {
	b, err := budget.NewAdaptive(0.5, 1, time.Second)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for range 200 { // a herd: 200 first attempts at once, all answered
		b.RecordAttempt(ctx, 1, true)
	}
	// A herd earns retries as a second's worth of first attempts does
	// (half of 200 a second), or at half the rate the provider answers:
	// here 200 in the last tenth of a second.
	fmt.Printf("%.0f retries/s while retries work\n", math.Round(b.Rate()))
	for range 20 { // then 20 retries, none of which worked
		b.RecordAttempt(ctx, 2, false)
	}
	fmt.Printf("%.0f retry/s when none works\n", b.Rate())
	// Output:
	// 1000 retries/s while retries work
	// 1 retry/s when none works
}

// While most attempts fail, an Adaptive holds first attempts back:
// each waits for a turn, asking again, for at most maxWait, then goes.
func ExampleAdaptive_HoldFirst() {
	b, err := budget.NewAdaptive(0.5, 1, time.Second)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	wait, _ := b.HoldFirst(ctx, 0)
	fmt.Println("healthy: held for", wait)
	for range 100 { // an outage: every attempt fails
		b.RecordAttempt(ctx, 1, false)
		b.ReserveRetry(ctx, 0)
	}
	b.HoldFirst(ctx, 0) // a probe may go
	wait, _ = b.HoldFirst(ctx, 0)
	fmt.Println("failing: held", wait > 0)
	wait, again := b.HoldFirst(ctx, time.Second)
	fmt.Println("held for a second already:", wait, again)
	// Output:
	// healthy: held for 0s
	// failing: held true
	// held for a second already: 0s false
}

// A Pacing paces retries from counts kept elsewhere, as the fleet module's
// Budget does with a whole fleet's.
func ExampleNewPacing() {
	p, err := budget.NewPacing(0.5, 1, time.Second)
	if err != nil {
		panic(err)
	}
	// 100 first attempts a second, no retry yet: up to 50 retries a second.
	rate := p.Rate(100, 0, 0, time.Second)
	now := time.Now()
	res := p.Reserve(now, rate, time.Second)
	fmt.Println(rate, res.Delay, res.OK)
	// Output: 50 0s true
}

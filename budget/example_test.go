package budget_test

import (
	"context"
	"fmt"
	"time"

	"github.com/steadfast-go/steadfast/budget"
)

func ExampleNewAdaptive() {
	s := budget.DefaultSetting()
	s.Ratio = 0.2 // at most 20 % more load than no retrying
	b, err := budget.NewAdaptive(s)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for range 100 { // a healthy second: 100 first attempts, all answered
		b.RecordAttempt(ctx, 1, true)
	}
	fmt.Printf("healthy: throttle %.2f\n", b.Throttle())
	for range 300 { // then the provider refuses nearly everything
		b.RecordAttempt(ctx, 1, false)
	}
	// 400 requests, 100 accepted: (400 − 2·100 − 8) / (400 + 8).
	fmt.Printf("collapsed: throttle %.2f\n", b.Throttle())
	// Output:
	// healthy: throttle 0.00
	// collapsed: throttle 0.47
}

// A Pacer paces retries from counts kept elsewhere, as the fleet module's
// Budget does with a whole fleet's.
func ExampleNewPacer() {
	p, err := budget.NewPacer(budget.DefaultSetting())
	if err != nil {
		panic(err)
	}
	now := time.Now()
	for i := range 3 { // 100 retries a second: one now, then one every 10ms
		res := p.Reserve(now, 100, time.Second)
		fmt.Println(i, res.OK, res.Delay)
	}
	// Output:
	// 0 true 0s
	// 1 true 10ms
	// 2 true 20ms
}

package budget_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/budget"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
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

// A run of three calls: the providers see three requests, retries
// included, and the run's next call is refused before it is sent.
func ExampleWithRun() {
	requests := 0
	llm := core.RunnableFunc(func(ctx context.Context, in any, _ ...core.Option) (any, error) {
		requests++
		if requests == 1 {
			return nil, errors.New("connection reset") // retried
		}
		return "step done", nil
	})
	cfg := retry.DefaultRetryConfig()
	cfg.InitialBackoff, cfg.MaxBackoff = time.Nanosecond, time.Nanosecond
	r, err := retry.New(llm, cfg, retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		panic(err)
	}
	ctx, err := budget.WithRun(context.Background(), budget.Run{Calls: 3})
	if err != nil {
		panic(err)
	}
	for step := 1; ; step++ {
		if _, err := r.Invoke(ctx, "next"); err != nil {
			re, _ := errors.AsType[*budget.RunError](err)
			spent, _ := budget.Spent(ctx)
			fmt.Printf("step %d: run ended by %s after %d calls; %d requests sent\n", step, re.Limit, spent.Calls, requests)
			return
		}
		fmt.Printf("step %d: done\n", step)
	}
	// Output:
	// step 1: done
	// step 2: done
	// step 3: run ended by calls after 3 calls; 3 requests sent
}

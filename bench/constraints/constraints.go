// Package constraints plays route's constraints under random failures, in
// virtual time: a retry layer over a fallback over a retried pool of three
// tagged deployments (two in region:eu, one in region:us) and a tagged us
// model, each failing at random (5xx, 429s with a Retry-After, dead keys,
// stalls), by Invoke, Batch and Stream, calls that require region:eu and
// calls that exclude it. bench/README.md has the table
// (results/constraints).
package constraints

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	mnoop "go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
	"github.com/steadfast-go/steadfast/route"
)

// Result is one seeded run.
type Result struct {
	Failures, Calls, Served, Failed int
	Outside                         int // calls that reached a deployment outside their constraints
	Unmet                           int // calls that met a *route.Error, though a candidate always meets them
}

func (r Result) String() string {
	return fmt.Sprintf("%6d %6d %6d %6d %8d %6d", r.Failures, r.Calls, r.Served, r.Failed, r.Outside, r.Unmet)
}

type status struct {
	code  int
	after time.Duration
}

func (s *status) Error() string             { return fmt.Sprintf("status %d", s.code) }
func (s *status) StatusCode() int           { return s.code }
func (s *status) RetryAfter() time.Duration { return s.after }

type deployment struct {
	name, region string
	res          *Result
	mu           *sync.Mutex
	rng          *rand.Rand
}

func (d *deployment) invoke(ctx context.Context, in any, _ ...core.Option) (any, error) {
	d.mu.Lock()
	if in.(string) != d.region {
		d.res.Outside++
	}
	roll := d.rng.IntN(10)
	if roll < 6 {
		d.res.Failures++
	}
	d.mu.Unlock()
	switch roll {
	case 0, 1:
		return nil, &status{code: 503}
	case 2:
		return nil, &status{code: 429, after: 200 * time.Millisecond}
	case 3:
		return nil, &status{code: 401}
	case 4, 5:
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	return d.name, nil
}

// Run plays failures random failures with seed. It must run inside a
// synctest bubble.
func Run(seed uint64, failures int) (Result, error) {
	var res Result
	var mu sync.Mutex
	mk := func(name, region string, n uint64) core.Runnable {
		d := &deployment{name: name, region: region, res: &res, mu: &mu, rng: rand.New(rand.NewPCG(seed, n))}
		return route.Tag(core.RunnableFunc(d.invoke), 1, "region:"+region)
	}
	p, err := pool.New([]pool.Deployment{
		{Name: "eu-1", Runnable: mk("eu-1", "eu", 1)},
		{Name: "eu-2", Runnable: mk("eu-2", "eu", 2)},
		{Name: "us-1", Runnable: mk("us-1", "us", 3)},
	}, pool.WithMeterProvider(mnoop.NewMeterProvider()), pool.WithDeadCooldown(time.Second), pool.WithCooldown(3, time.Minute, time.Second))
	if err != nil {
		return res, err
	}
	cfg := retry.DefaultRetryConfig()
	cfg.PerAttemptTimeout, cfg.FirstChunkTimeout = time.Second, time.Second
	quiet := []retry.Option{retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(mnoop.NewMeterProvider())}
	inner, err := retry.New(p, cfg, quiet...)
	if err != nil {
		return res, err
	}
	fb, err := fallback.New([]core.Runnable{inner, mk("claude", "us", 4)},
		fallback.WithTracerProvider(tnoop.NewTracerProvider()), fallback.WithMeterProvider(mnoop.NewMeterProvider()))
	if err != nil {
		return res, err
	}
	outer, err := retry.New(fb, cfg, quiet...)
	if err != nil {
		return res, err
	}
	eu := route.With(context.Background(), route.Constraints{Require: []string{"region:eu"}})
	notEU := route.With(context.Background(), route.Constraints{Exclude: []string{"region:eu"}})
	for i := 0; ; i++ {
		mu.Lock()
		done := res.Failures >= failures
		mu.Unlock()
		if done {
			return res, nil
		}
		ctx, in := eu, "eu"
		if i%2 == 1 {
			ctx, in = notEU, "us"
		}
		var err error
		switch i % 3 {
		case 0:
			_, err = outer.Invoke(ctx, in)
		case 1:
			_, err = outer.Batch(ctx, []any{in, in})
		case 2:
			var ch <-chan any
			if ch, err = outer.Stream(ctx, in); err == nil {
				for v := range ch {
					if e, ok := v.(error); ok {
						err = e
					}
				}
			}
		}
		res.Calls++
		var re *route.Error
		switch {
		case err == nil:
			res.Served++
		case errors.As(err, &re):
			res.Unmet++
		default:
			res.Failed++
		}
	}
}

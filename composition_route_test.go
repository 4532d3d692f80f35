package steadfast_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
	"github.com/steadfast-go/steadfast/route"
)

// flaky fails at random, seeded: a 503, a 429 with a Retry-After, a dead
// key (401), a stall past the attempt's timeout; or answers. It notes
// each call that reached it with the region the call asked for.
type flaky struct {
	name, region string
	mu           *sync.Mutex // shared by the deployments: it guards failures and wrong
	rng          *rand.Rand
	failures     *int
	wrong        *[]string // calls that reached a deployment outside their region
}

func (f *flaky) Invoke(ctx context.Context, in any, _ ...core.Option) (any, error) {
	f.mu.Lock()
	want := in.(string)
	if want != f.region {
		*f.wrong = append(*f.wrong, want+" call reached "+f.name)
	}
	roll := f.rng.IntN(10)
	if roll < 6 {
		*f.failures++
	}
	f.mu.Unlock()
	switch roll {
	case 0, 1:
		return nil, &providerError{code: 503}
	case 2:
		return nil, &providerError{code: 429, after: 200 * time.Millisecond}
	case 3:
		return nil, &providerError{code: 401}
	case 4, 5:
		<-ctx.Done() // a stall: the attempt's timeout ends it
		return nil, context.Cause(ctx)
	}
	return f.name, nil
}

func (f *flaky) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(f.Invoke).Batch(ctx, in, opts...)
}

func (f *flaky) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(f.Invoke).Stream(ctx, in, opts...)
}

// retry ⊃ fallback ⊃ [retry ⊃ pool of three tagged deployments (two in
// region:eu, one in region:us), a tagged us model]: under more than
// 10 000 random failures (5xx, 429s, dead keys, stalls), by Invoke, Batch
// and Stream, a call that requires region:eu never reaches a deployment
// without it, and one that excludes it never reaches one with it
// (#73, item 3).
func TestARequiredTagIsNeverMissedUnderFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		failures := 0
		var wrong []string
		var mu sync.Mutex
		mk := func(name, region string, seed uint64) core.Runnable {
			f := &flaky{name: name, region: region, mu: &mu, rng: rand.New(rand.NewPCG(seed, 7)), failures: &failures, wrong: &wrong}
			return route.Tag(mock.Named(name, f), 1, "region:"+region)
		}
		p, err := pool.New([]pool.Deployment{
			{Name: "eu-1", Runnable: mk("eu-1", "eu", 1)},
			{Name: "eu-2", Runnable: mk("eu-2", "eu", 2)},
			{Name: "us-1", Runnable: mk("us-1", "us", 3)},
		}, pool.WithMeterProvider(noop.NewMeterProvider()), pool.WithDeadCooldown(time.Second), pool.WithCooldown(3, time.Minute, time.Second))
		if err != nil {
			t.Fatal(err)
		}
		cfg := retry.DefaultRetryConfig()
		cfg.PerAttemptTimeout, cfg.FirstChunkTimeout = time.Second, time.Second
		quiet := []retry.Option{retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider())}
		inner, err := retry.New(p, cfg, quiet...)
		if err != nil {
			t.Fatal(err)
		}
		fb, err := fallback.New([]core.Runnable{inner, mk("claude", "us", 4)},
			fallback.WithTracerProvider(tnoop.NewTracerProvider()), fallback.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		outer, err := retry.New(fb, cfg, quiet...)
		if err != nil {
			t.Fatal(err)
		}
		eu := route.With(context.Background(), route.Constraints{Require: []string{"region:eu"}})
		notEU := route.With(context.Background(), route.Constraints{Exclude: []string{"region:eu"}})
		served, refused := 0, 0
		note := func(err error) {
			var re *route.Error
			switch {
			case err == nil:
				served++
			case errors.As(err, &re):
				t.Fatalf("a call met a *route.Error (%v): some candidate always meets its constraints", err)
			default:
				refused++
			}
		}
		for i := 0; ; i++ {
			mu.Lock()
			done := failures >= 10_000
			mu.Unlock()
			if done {
				break
			}
			ctx, in := eu, "eu"
			if i%2 == 1 {
				ctx, in = notEU, "us"
			}
			switch i % 3 {
			case 0:
				_, err := outer.Invoke(ctx, in)
				note(err)
			case 1:
				_, err := outer.Batch(ctx, []any{in, in})
				note(err)
			case 2:
				ch, err := outer.Stream(ctx, in)
				if err == nil {
					for v := range ch {
						if e, ok := v.(error); ok {
							err = e
						}
					}
				}
				note(err)
			}
		}
		if len(wrong) > 0 {
			t.Fatalf("%d calls reached a deployment outside their constraints, the first: %v", len(wrong), wrong[:min(5, len(wrong))])
		}
		if served == 0 {
			t.Fatalf("no call was served in %d failures", failures)
		}
		t.Logf("%d random failures: %d calls served, %d failed, none outside its constraints", failures, served, refused)
	})
}

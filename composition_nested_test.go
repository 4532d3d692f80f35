package steadfast_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
)

// A random nesting of retry layers, fallbacks and pools over fake
// providers, for TestNestedRetriesNeverMultiply.
type nesting struct {
	r    core.Runnable
	desc string
	// once is the requests one pass through the nesting can make at
	// most when no layer below the outermost retries: a fallback's
	// candidates and a pool's deployments each once, as their moves are
	// not retries.
	once int
	// chain is set when the nesting is retry layers over one provider.
	chain bool
}

// leafProvider counts its requests in all and answers each by its seeded
// script of faults.
func leafProvider(rng *rand.Rand, all *atomic.Int64) core.Runnable {
	weights := [4]int{rng.IntN(4), 1 + rng.IntN(6), rng.IntN(2), rng.IntN(2)}
	seed := rng.Uint64()
	var n atomic.Uint64
	return core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		all.Add(1)
		r := rand.New(rand.NewPCG(seed, n.Add(1)))
		x := r.IntN(weights[0] + weights[1] + weights[2] + weights[3])
		switch {
		case x < weights[0]:
			return "ok", nil
		case x < weights[0]+weights[1]:
			return nil, &providerError{code: 503}
		case x < weights[0]+weights[1]+weights[2]:
			return nil, &providerError{code: 400}
		}
		return nil, &providerError{code: 401}
	})
}

// randomNesting builds a nesting of depth at most depth, whose retry
// layers use nested ("" for the default) and random policies.
func randomNesting(t *testing.T, rng *rand.Rand, depth int, nested string, all *atomic.Int64) nesting {
	t.Helper()
	kind := rng.IntN(4)
	if depth == 0 {
		kind = 0
	}
	switch kind {
	case 0:
		return nesting{r: leafProvider(rng, all), desc: "p", once: 1, chain: true}
	case 1: // a retry layer
		inner := randomNesting(t, rng, depth-1, nested, all)
		cfg := retry.RetryConfig{MaxRetries: rng.IntN(4), InitialBackoff: time.Millisecond,
			MaxBackoff: 4 * time.Millisecond, Nested: nested}
		r, err := retry.New(inner.r, cfg, retry.WithTracerProvider(nil))
		if err != nil {
			t.Fatal(err)
		}
		return nesting{r: r, desc: fmt.Sprintf("retry%d(%s)", cfg.MaxRetries, inner.desc), once: inner.once, chain: inner.chain}
	case 2: // a fallback over two candidates, moving on from any failure
		a, b := randomNesting(t, rng, depth-1, nested, all), randomNesting(t, rng, depth-1, nested, all)
		r, err := fallback.New([]core.Runnable{a.r, b.r}, fallback.WithSwitchIf(func(error) bool { return true }))
		if err != nil {
			t.Fatal(err)
		}
		return nesting{r: r, desc: "fallback(" + a.desc + ", " + b.desc + ")", once: a.once + b.once}
	default: // a pool of two or three deployments
		n := 2 + rng.IntN(2)
		deps := make([]pool.Deployment, n)
		descs := make([]string, n)
		once := 0
		for i := range deps {
			d := randomNesting(t, rng, depth-1, nested, all)
			deps[i] = pool.Deployment{Name: fmt.Sprint("d", i), Runnable: d.r}
			descs[i], once = d.desc, once+d.once
		}
		r, err := pool.New(deps)
		if err != nil {
			t.Fatal(err)
		}
		return nesting{r: r, desc: "pool(" + strings.Join(descs, ", ") + ")", once: once}
	}
}

// Retry layers nested at random (depth 1 to 3 below the outermost, random
// policies and faults, fallbacks and pools between them) make no more
// requests than the outermost layer's attempts, each reaching every
// candidate and deployment at most once, and never more than its
// MaxRetries + 1 such passes; over retry layers alone, exactly one request
// an outer attempt. With every layer retrying (Nested "retry"), the same
// nestings exceed the bound.
func TestNestedRetriesNeverMultiply(t *testing.T) {
	const nestings = 300
	over := map[string]int{}
	worst := map[string][2]int64{} // the most requests over the outermost's attempts, and their bound
	for _, nested := range []string{"", "retry"} {
		for seed := range uint64(nestings) {
			synctest.Test(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 0x2e57))
				var all atomic.Int64
				inner := randomNesting(t, rng, 1+rng.IntN(3), nested, &all)
				maxRetries := 1 + rng.IntN(3)
				var attempts atomic.Int64 // the outermost layer's
				counted := core.RunnableFunc(func(ctx context.Context, in any, opts ...core.Option) (any, error) {
					attempts.Add(1)
					return inner.r.Invoke(ctx, in, opts...)
				})
				outer, err := retry.New(counted, retry.RetryConfig{MaxRetries: maxRetries, InitialBackoff: time.Millisecond,
					MaxBackoff: 4 * time.Millisecond}, retry.WithTracerProvider(nil))
				if err != nil {
					t.Fatal(err)
				}
				_, _ = outer.Invoke(context.Background(), "q")
				requests, passes := all.Load(), attempts.Load()
				if w := worst[nested]; requests*max(w[1], 1) > w[0]*int64(maxRetries+1)*int64(inner.once) {
					worst[nested] = [2]int64{requests, int64(maxRetries+1) * int64(inner.once)}
				}
				if requests > passes*int64(inner.once) || passes > int64(maxRetries+1) {
					over[nested]++
					if nested == "" {
						t.Errorf("retry%d(%s): %d requests in %d attempts, want at most %d an attempt and %d attempts",
							maxRetries, inner.desc, requests, passes, inner.once, maxRetries+1)
					}
				}
				if nested == "" && inner.chain && requests != passes {
					t.Errorf("retry%d(%s): %d requests in %d attempts, want one an attempt", maxRetries, inner.desc, requests, passes)
				}
			})
		}
	}
	t.Logf("nestings over the bound, of %d: %d with the default, %d with every layer retrying (at worst %d requests where %d were allowed)",
		nestings, over[""], over["retry"], worst["retry"][0], worst["retry"][1])
	if over["retry"] == 0 {
		t.Errorf("no nesting with every layer retrying exceeded the bound: the check cannot tell")
	}
}

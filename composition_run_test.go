package steadfast_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/budget"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/hedge"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
	"github.com/steadfast-go/steadfast/route"
)

// billed is a provider that fails at random, seeded (a 503, a 429, a
// stall past the attempt's timeout), or answers and reports tokens; it
// counts the requests that reached it.
type billed struct {
	name     string
	mu       *sync.Mutex // shared by the providers of one chain
	rng      *rand.Rand
	requests *atomic.Int32
	tokens   int64 // each answer's
}

func (b *billed) Invoke(ctx context.Context, in any, _ ...core.Option) (any, error) {
	b.requests.Add(1)
	b.mu.Lock()
	roll := b.rng.IntN(10)
	b.mu.Unlock()
	switch roll {
	case 0, 1, 2:
		return nil, &providerError{code: 503}
	case 3:
		return nil, &providerError{code: 429, after: 100 * time.Millisecond}
	case 4:
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	(&llmhttp.Response{InputTokens: b.tokens / 2, OutputTokens: b.tokens - b.tokens/2, HasUsage: true}).Record(ctx)
	return b.name, nil
}

func (b *billed) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(b.Invoke).Batch(ctx, in, opts...)
}

func (b *billed) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(b.Invoke).Stream(ctx, in, opts...)
}

// runChain is retry ⊃ fallback ⊃ [retry ⊃ pool of two priced deployments,
// a third priced model], over billed providers sharing requests.
func runChain(t *testing.T, seed uint64, requests *atomic.Int32) core.Runnable {
	t.Helper()
	var mu sync.Mutex
	mk := func(name string, n uint64, price float64) core.Runnable {
		b := &billed{name: name, mu: &mu, rng: rand.New(rand.NewPCG(seed, n)), requests: requests, tokens: 1000}
		return route.Tag(mock.Named(name, b), price)
	}
	p, err := pool.New([]pool.Deployment{
		{Name: "a", Runnable: mk("a", 1, 2)},
		{Name: "b", Runnable: mk("b", 2, 2)},
	}, pool.WithMeterProvider(noop.NewMeterProvider()))
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
	fb, err := fallback.New([]core.Runnable{inner, mk("c", 3, 10)},
		fallback.WithTracerProvider(tnoop.NewTracerProvider()), fallback.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	outer, err := retry.New(fb, cfg, quiet...)
	if err != nil {
		t.Fatal(err)
	}
	return outer
}

// drain reads a stream to its end and returns its error, if any.
func drain(ch <-chan any, err error) error {
	if err != nil {
		return err
	}
	for v := range ch {
		if e, ok := v.(error); ok {
			err = e
		}
	}
	return err
}

// A run of N calls through retry ⊃ fallback ⊃ retry ⊃ pool, under random
// 503s, 429s and stalls, by Invoke, Batch and Stream: the providers see
// exactly N requests, retries, fallbacks and a pool moving on included,
// and the call that finds the run spent ends at once with a *RunError
// (#73, item 5).
func TestARunsCallsAreExactlyItsLimit(t *testing.T) {
	for seed := range uint64(40) {
		synctest.Test(t, func(t *testing.T) {
			var sent atomic.Int32
			r := runChain(t, seed, &sent)
			limit := 5 + int(seed)
			ctx, err := budget.WithRun(context.Background(), budget.Run{Calls: limit})
			if err != nil {
				t.Fatal(err)
			}
			var re *budget.RunError
			items := 1 // the requests the last call asked for at least
			for i := 0; ; i++ {
				switch i % 3 {
				case 0:
					items = 1
					_, err = r.Invoke(ctx, "q")
				case 1:
					items = 2
					_, err = r.Batch(ctx, []any{"q", "q"})
				case 2:
					items = 1
					err = drain(r.Stream(ctx, "q"))
				}
				if errors.As(err, &re) {
					break
				}
				if i > 10*limit {
					t.Fatalf("seed %d: %d calls and the run of %d calls never ended", seed, i, limit)
				}
			}
			// A Batch of two items is refused whole when one call is
			// left: the run may end one short of its limit then.
			synctest.Wait() // a stream abandoned before its goroutine ran: it runs, and counts, first
			spent, _ := budget.Spent(ctx)
			requests := int(sent.Load())
			if spent.Calls != requests || requests > limit || limit-requests >= items || re.Limit != "calls" {
				t.Fatalf("seed %d: a run of %d calls sent %d requests, spent %+v, ended by %q (%v)", seed, limit, requests, spent, re.Limit, err)
			}
			for int(sent.Load()) < limit { // a Batch left one call: an Invoke takes it
				_, _ = r.Invoke(ctx, "q")
			}
			before := time.Now()
			if _, err := r.Invoke(ctx, "q"); !errors.As(err, &re) || time.Since(before) != 0 || int(sent.Load()) != limit {
				t.Fatalf("seed %d: a spent run's next call: %v after %v, %d requests", seed, err, time.Since(before), sent.Load())
			}
		})
	}
}

// Tokens and cost: a run ends at the first call asked for once what its
// providers billed reaches the limit, and the cost is each answer's tokens
// at the price of the candidate that served it.
func TestARunsTokensAndCostEndIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		r := runChain(t, 1, &sent)
		ctx, _ := budget.WithRun(context.Background(), budget.Run{Tokens: 5000})
		var re *budget.RunError
		var err error
		for err == nil || !errors.As(err, &re) {
			_, err = r.Invoke(ctx, "q")
		}
		spent, _ := budget.Spent(ctx)
		if re.Limit != "tokens" || spent.Tokens < 5000 || spent.Tokens >= 5000+1000 {
			t.Fatalf("ended by %q with %+v spent: want tokens, at least 5000 and under one answer more", re.Limit, spent)
		}
		// a and b cost $2 a million tokens, c $10: every answer of 1000
		// tokens costs $0.002 or $0.01.
		if spent.Cost < float64(spent.Tokens)*2/1e6-1e-9 || spent.Cost > float64(spent.Tokens)*10/1e6+1e-9 {
			t.Fatalf("cost %v of %d tokens: not at the candidates' prices", spent.Cost, spent.Tokens)
		}

		ctx, _ = budget.WithRun(context.Background(), budget.Run{Cost: 0.02})
		for err = nil; err == nil || !errors.As(err, &re); {
			_, err = r.Invoke(ctx, "q")
		}
		if spent, _ = budget.Spent(ctx); re.Limit != "cost" || spent.Cost < 0.02 || spent.Cost >= 0.03 {
			t.Fatalf("ended by %q with %+v spent: want cost, from $0.02 to under one answer more", re.Limit, spent)
		}
	})
}

// A cost limit over a candidate with no price is an error from the call
// after its tokens came, naming what is missing; a bad limit is an error
// from WithRun.
func TestARunsCostNeedsPrices(t *testing.T) {
	var sent atomic.Int32
	var mu sync.Mutex
	b := &billed{name: "free", mu: &mu, rng: rand.New(rand.NewPCG(0, 0)), requests: &sent, tokens: 100}
	fb, err := fallback.New([]core.Runnable{b, route.Tag(b, 3)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, _ := budget.WithRun(context.Background(), budget.Run{Cost: 1})
	for range 10 {
		_, _ = fb.Invoke(ctx, "q")
	}
	_, err = fb.Invoke(ctx, "q")
	var re *budget.RunError
	if !errors.As(err, &re) || re.Limit != "price" || re.Unpriced == 0 {
		t.Fatalf("an unpriced candidate under a cost limit: %v", err)
	}
	for _, bad := range []budget.Run{{Calls: -1}, {Tokens: -1}, {Cost: -0.5}} {
		if _, err := budget.WithRun(context.Background(), bad); err == nil {
			t.Errorf("WithRun(%+v): no error", bad)
		}
	}
}

// A request refused on this side is not a call: an open circuit under
// the retry layer gives back the attempt's draw. A hedge's second request
// is one too.
func TestARunCountsWhatReachesAProvider(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		requests := 0
		down := core.RunnableFunc(func(ctx context.Context, in any, _ ...core.Option) (any, error) {
			requests++
			return nil, &providerError{code: 503}
		})
		br, err := breaker.New(down, gobreaker.Settings{Name: "p", ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 2 }, Timeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		cfg := retry.DefaultRetryConfig()
		cfg.MaxRetries = 4
		r, err := retry.New(br, cfg, retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		ctx, _ := budget.WithRun(context.Background(), budget.Run{Calls: 10})
		_, err = r.Invoke(ctx, "q")
		spent, _ := budget.Spent(ctx)
		if requests != 2 || spent.Calls != 2 {
			t.Fatalf("two requests reached the provider before its circuit opened, the run spent %d calls (%v)", spent.Calls, err)
		}

		var slow atomic.Int32
		h, err := hedge.New(core.RunnableFunc(func(ctx context.Context, in any, _ ...core.Option) (any, error) {
			if slow.Add(1) == 1 {
				<-ctx.Done() // the first request stalls: the hedge sends a second
				return nil, context.Cause(ctx)
			}
			return "ok", nil
		}), hedge.Config{Delay: time.Second, MaxHedges: 1}, hedge.WithTracerProvider(tnoop.NewTracerProvider()), hedge.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		hr, err := retry.New(h, retry.DefaultRetryConfig(), retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		ctx, _ = budget.WithRun(context.Background(), budget.Run{Calls: 10})
		if _, err := hr.Invoke(ctx, "q"); err != nil {
			t.Fatal(err)
		}
		if spent, _ := budget.Spent(ctx); spent.Calls != 2 || slow.Load() != 2 {
			t.Fatalf("a hedged call of %d requests spent %d calls", slow.Load(), spent.Calls)
		}
	})
}

// The run survives its call's core.State hand-off: a call continued from
// a State written in another process (as the Temporal adapter hands one
// on) goes on from the spend it held, and its limits.
func TestARunSurvivesTheStateHandOff(t *testing.T) {
	requests := 0
	llm := core.RunnableFunc(func(ctx context.Context, in any, _ ...core.Option) (any, error) {
		requests++
		return nil, &providerError{code: 503}
	})
	cfg := retry.DefaultRetryConfig()
	cfg.MaxRetries, cfg.InitialBackoff, cfg.MaxBackoff = 2, time.Millisecond, time.Millisecond
	r, err := retry.New(llm, cfg, retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	// The first process: a call of three attempts, its State written.
	var st core.State
	ctx, _ := budget.WithRun(core.WithState(context.Background(), &st), budget.Run{Calls: 4})
	_, _ = r.Invoke(ctx, "q")
	data, err := json.Marshal(&st)
	if err != nil || requests != 3 {
		t.Fatalf("the first process: %d requests, its State %s (%v)", requests, data, err)
	}
	// Another: the State read back, a context with no run of its own.
	var back core.State
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	cfg.MaxRetries = 5
	if r, err = retry.New(llm, cfg, retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider())); err != nil {
		t.Fatal(err)
	}
	cont := retry.WithContinuation(core.WithState(context.Background(), &back), retry.Continuation{InvocationID: "call-1", Attempts: 3})
	_, err = r.Invoke(cont, "q")
	var re *budget.RunError
	if requests != 4 || !errors.As(err, &re) || re.Spent.Calls != 4 || re.Limits.Calls != 4 {
		t.Fatalf("continued from its State, the run of 4 calls sent %d requests in all, ended with %v", requests, err)
	}
}

// Package runbudget plays a run's budget (budget.WithRun) in virtual
// time: an agent's calls, by Invoke and Stream in turn, through a retry
// layer over a fallback over a retried pool of two deployments and a
// backup model, each failing at random under one of three fault models,
// until the run's calls are spent. bench/README.md has the table
// (results/runbudget).
package runbudget

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing/synctest"
	"time"

	mnoop "go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/budget"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
)

// A Model is how a provider fails: the chance in 100 of a 503, of a 429
// with a Retry-After, of a stall past the attempt's timeout.
type Model struct {
	Name                  string
	Overload, Limit, Hang int
}

// Models are the fault models the table is played under.
var Models = []Model{
	{Name: "overload", Overload: 40},
	{Name: "stalls", Hang: 30},
	{Name: "mixed", Overload: 20, Limit: 10, Hang: 10},
}

// Result is one seeded run.
type Result struct {
	Requests int // that reached a provider
	Backup   int // of them, the backup model's
	Spent    int // the run's calls spent, as budget.Spent says
	Served   int // the agent's calls answered
	Calls    int // the agent's calls, the last one refused
	Ended    string
}

type status struct {
	code  int
	after time.Duration
}

func (s *status) Error() string             { return fmt.Sprintf("status %d", s.code) }
func (s *status) StatusCode() int           { return s.code }
func (s *status) RetryAfter() time.Duration { return s.after }

type provider struct {
	m      Model
	mu     *sync.Mutex
	rng    *rand.Rand
	res    *Result
	backup bool
}

func (p *provider) invoke(ctx context.Context, in any, _ ...core.Option) (any, error) {
	p.mu.Lock()
	p.res.Requests++
	if p.backup {
		p.res.Backup++
	}
	roll := p.rng.IntN(100)
	p.mu.Unlock()
	switch {
	case roll < p.m.Overload:
		return nil, &status{code: 503}
	case roll < p.m.Overload+p.m.Limit:
		return nil, &status{code: 429, after: 200 * time.Millisecond}
	case roll < p.m.Overload+p.m.Limit+p.m.Hang:
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	return "answer", nil
}

// Run plays an agent in a run of limit calls under m, seeded, until the
// run ends it; call it inside a synctest bubble.
func Run(m Model, limit int, seed uint64) (Result, error) {
	var res Result
	var mu sync.Mutex
	mk := func(n uint64, backup bool) core.Runnable {
		return core.RunnableFunc((&provider{m: m, mu: &mu, rng: rand.New(rand.NewPCG(seed, n)), res: &res, backup: backup}).invoke)
	}
	p, err := pool.New([]pool.Deployment{{Name: "a", Runnable: mk(1, false)}, {Name: "b", Runnable: mk(2, false)}},
		pool.WithMeterProvider(mnoop.NewMeterProvider()))
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
	fb, err := fallback.New([]core.Runnable{inner, mk(3, true)},
		fallback.WithTracerProvider(tnoop.NewTracerProvider()), fallback.WithMeterProvider(mnoop.NewMeterProvider()))
	if err != nil {
		return res, err
	}
	agent, err := retry.New(fb, cfg, quiet...)
	if err != nil {
		return res, err
	}
	ctx, err := budget.WithRun(context.Background(), budget.Run{Calls: limit})
	if err != nil {
		return res, err
	}
	// res's Requests and Backup are the providers', counted under mu (an
	// abandoned stream's goroutine may still be ending); the rest the
	// agent's.
	read := func() Result {
		synctest.Wait() // a stream abandoned before its goroutine ran: it runs, and counts, first
		mu.Lock()
		defer mu.Unlock()
		return res
	}
	for res.Calls = 1; res.Calls <= 100*limit; res.Calls++ {
		err := call(ctx, agent, res.Calls%2 == 0)
		if re, ok := errors.AsType[*budget.RunError](err); ok {
			spent, _ := budget.Spent(ctx)
			out := read()
			out.Spent, out.Ended = spent.Calls, re.Limit
			return out, nil
		}
		if err == nil {
			res.Served++
		}
	}
	return read(), fmt.Errorf("a run of %d calls was not ended in %d calls", limit, res.Calls)
}

// call makes one of the agent's calls, by Stream when stream is set.
func call(ctx context.Context, r core.Runnable, stream bool) error {
	if !stream {
		_, err := r.Invoke(ctx, "step")
		return err
	}
	ch, err := r.Stream(ctx, "step")
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

package storm

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steadfast-go/steadfast/bench"
)

// ClosedLoop makes a scenario's load closed: a fixed set of clients, each
// calling, waiting for its answer, thinking, and calling again, against a
// provider of Slots concurrent requests that each take Service. A request
// that finds every slot busy fails at once (a 503). The offered load then
// depends on how fast answers come back: a client waiting on retries makes
// no new call.
type ClosedLoop struct {
	Clients int
	Think   time.Duration // the mean of an exponential think time
	Slots   int
	Service time.Duration
	// Synchronized makes every client's first call at the same instant,
	// the start: a batch pipeline starting its workers, a deploy, a cron.
	// Otherwise each client thinks first.
	Synchronized bool
}

// ClosedCapacity is the closed-loop provider's capacity: requests a second.
const ClosedCapacity = 1000

// closedShape is the load of every closed-loop scenario: 200 clients
// thinking 250ms on average, against 20 slots of 20ms (1000 requests a
// second, about 740 offered).
var closedShape = &ClosedLoop{Clients: 200, Think: 250 * time.Millisecond, Slots: 20, Service: 20 * time.Millisecond}

// ClosedScenarios are the three storms under closed-loop load.
var ClosedScenarios = []Scenario{
	// (a) Overload without outage: the clients' random arrivals find every
	// slot busy now and then.
	{Name: "closed-overload", Duration: 3 * time.Second, Capacity: ClosedCapacity, Closed: closedShape},
	// (b) A total outage of 1s.
	{Name: "closed-outage", Duration: 4 * time.Second, Capacity: ClosedCapacity, Closed: closedShape,
		OutageStart: time.Second, OutageEnd: 2 * time.Second},
	// (c) A metastable provider: a second of think times halved (a surge)
	// triggers a collapse, ten times slower, until its load has stayed at
	// most its capacity for a second (see collapse); (d) the same
	// collapse, deeper: it recovers only under 40 % of its capacity, which
	// the clients' load is above.
	{Name: "closed-collapse", Duration: 5 * time.Second, Capacity: ClosedCapacity, Closed: closedShape,
		SpikeStart: time.Second, SpikeEnd: 2 * time.Second, SpikeFactor: 2, Metastable: true, CollapsedShare: 0.1},
	{Name: "closed-deep-collapse", Duration: 5 * time.Second, Capacity: ClosedCapacity, Closed: closedShape,
		SpikeStart: time.Second, SpikeEnd: 2 * time.Second, SpikeFactor: 2, Metastable: true, CollapsedShare: 0.1, RecoverShare: 0.4},
}

// ClosedPolicy is every library's under closed-loop load: 5 attempts, 10ms
// doubling to 1s, 50% jitter.
var ClosedPolicy = bench.Policy{Attempts: 5, Initial: 10 * time.Millisecond, Factor: 2, Max: time.Second, Jitter: 0.5}

// slotProvider is the closed-loop provider: Slots requests at a time,
// each taking Service; during the outage every request fails; collapsed
// (see collapse), each request takes Service / CollapsedShare.
type slotProvider struct {
	*provider // the clock, the counts and the collapse state
	inUse     atomic.Int32
}

func (p *slotProvider) request(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sc := p.sc
	now := time.Now()
	outage, down := p.arrive(now, now.Sub(p.start))
	if outage || p.inUse.Add(1) > int32(sc.Closed.Slots) {
		if !outage {
			p.inUse.Add(-1)
		}
		return ErrOverloaded
	}
	defer p.inUse.Add(-1)
	service := sc.Closed.Service
	if down {
		service = time.Duration(float64(service) / sc.CollapsedShare)
	}
	return bench.Sleep(ctx, service)
}

// runClosed plays a closed-loop scenario: each client calls until the
// scenario's duration has passed.
func runClosed(ctx context.Context, sc Scenario, r bench.Retrier, seed uint64) Result {
	start := time.Now()
	p := &slotProvider{provider: newProvider(sc, start)}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		okLatency []time.Duration
		calls     atomic.Int64
		success   atomic.Int64
		wg        sync.WaitGroup
	)
	for c := range sc.Closed.Clients {
		rng := rand.New(rand.NewPCG(seed, uint64(c)))
		wg.Go(func() {
			var mine, mineOK []time.Duration
			for first := true; ctx.Err() == nil; first = false {
				think := time.Duration(rng.ExpFloat64() * float64(sc.Closed.Think) / sc.spikeAt(time.Since(start)))
				if first && sc.Closed.Synchronized {
					think = 0
				}
				if time.Since(start)+think >= sc.Duration || bench.Sleep(ctx, think) != nil {
					break
				}
				began := time.Now()
				err := r.Do(ctx, p.request)
				took := time.Since(began)
				if err == nil {
					success.Add(1)
					mineOK = append(mineOK, took)
				}
				calls.Add(1)
				mine = append(mine, took)
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			okLatency = append(okLatency, mineOK...)
			mu.Unlock()
		})
	}
	wg.Wait()
	res := Result{Library: r.Name(), Calls: int(calls.Load()), Success: int(success.Load())}
	p.summarise(&res)
	res.setLatencies(latencies, okLatency)
	return res
}

// Package storm simulates retry storms: many clients, each call made
// through one retry library, against a simulated provider of fixed capacity,
// in real time. The arrivals and the provider are seeded; the libraries run
// their own code, timers and jitter.
package storm

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steadfast-go/steadfast/bench"
)

// Interval is the width of the time series' buckets.
const Interval = 100 * time.Millisecond

// Scenario is one storm.
type Scenario struct {
	Name     string
	Duration time.Duration // calls start during it
	Rate     float64       // first attempts a second, Poisson arrivals
	// BurstRate, when set, replaces Rate in the first half of every
	// BurstPeriod: a bursty load whose mean is (Rate+BurstRate)/2.
	BurstRate   float64
	BurstPeriod time.Duration
	Capacity    float64 // requests a second the healthy provider serves
	// OutageStart and OutageEnd bound a window in which every request
	// fails. Equal means none.
	OutageStart, OutageEnd time.Duration
	// SpikeStart and SpikeEnd bound a surge of the load, SpikeFactor times
	// the arrival rate (open loop) or as many times shorter think times
	// (closed loop): a metastable provider's trigger.
	SpikeStart, SpikeEnd time.Duration
	SpikeFactor          float64
	// Metastable makes the provider collapse (see collapse): during the
	// outage, the trigger, and whenever a window holds more attempts than
	// it can serve. Collapsed, it serves CollapsedShare of its capacity
	// (its requests take 1/CollapsedShare as long under closed-loop load)
	// until its load has stayed at most RecoverShare of its capacity (1
	// when 0) for Hysteresis.
	Metastable     bool
	CollapsedShare float64
	RecoverShare   float64
	// Herd, in an open-loop scenario, is a number of calls that all start
	// at the start (over HerdSpread), before the arrivals: a batch
	// pipeline starting its workers, a deploy, a cron.
	Herd int
	// HerdSpread spreads the herd's starts evenly over this long; 0 starts
	// them all at one instant.
	HerdSpread time.Duration
	// RoundTrip, in an open-loop scenario, is how long every answer takes
	// to come back, a refusal as a success: a herd's first attempts are
	// then all made before any has failed, as over a network, where a
	// provider that answers at once would let the first failures be seen
	// while the herd is still starting.
	RoundTrip time.Duration
	// Closed, when set, makes the load closed-loop (see ClosedLoop) and
	// the provider one of concurrent slots; Rate and BurstRate are unused.
	Closed *ClosedLoop
}

// rateAt is the arrival rate at t.
func (sc Scenario) rateAt(t time.Duration) float64 {
	r := sc.Rate
	if sc.BurstRate > 0 && t%sc.BurstPeriod < sc.BurstPeriod/2 {
		r = sc.BurstRate
	}
	return r * sc.spikeAt(t)
}

// spikeAt is the load's factor at t: SpikeFactor during the spike, else 1.
func (sc Scenario) spikeAt(t time.Duration) float64 {
	if sc.SpikeFactor > 0 && t >= sc.SpikeStart && t < sc.SpikeEnd {
		return sc.SpikeFactor
	}
	return 1
}

// TriggerEnd is when a metastable provider's trigger ends: its spike's end,
// else its outage's.
func (sc Scenario) TriggerEnd() time.Duration {
	if sc.SpikeFactor > 0 {
		return sc.SpikeEnd
	}
	return sc.OutageEnd
}

// MeanRate is the mean arrival rate.
func (sc Scenario) MeanRate() float64 {
	if sc.BurstRate > 0 {
		return (sc.Rate + sc.BurstRate) / 2
	}
	return sc.Rate
}

// Scaled returns sc with every duration multiplied by f, for quick runs.
func (sc Scenario) Scaled(f float64) Scenario {
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * f) }
	sc.Duration, sc.OutageStart, sc.OutageEnd = scale(sc.Duration), scale(sc.OutageStart), scale(sc.OutageEnd)
	sc.SpikeStart, sc.SpikeEnd = scale(sc.SpikeStart), scale(sc.SpikeEnd)
	return sc
}

// Synchronized returns sc's synchronized-start variant, named "sync-" and
// sc's name: under closed-loop load every client's first call is at the
// start; under open-loop load a herd of HerdSpan's worth of calls starts
// at once before the arrivals.
func (sc Scenario) Synchronized() Scenario {
	sc.Name = "sync-" + sc.Name
	if sc.Closed != nil {
		cl := *sc.Closed
		cl.Synchronized = true
		sc.Closed = &cl
	} else {
		sc.Herd = int(sc.MeanRate() * HerdSpan.Seconds())
	}
	return sc
}

// WithRoundTrip returns sc with every answer taking d to come back, named
// with "rtt-" before sc's name. Its herd, if any, starts over d, as
// clients reached over a network start within a round trip of one another
// rather than at one instant: the last go as the first failures come
// back, so the budget counts the herd in the order its answers arrive.
func (sc Scenario) WithRoundTrip(d time.Duration) Scenario {
	sc.Name = "rtt-" + sc.Name
	sc.RoundTrip = d
	sc.HerdSpread = d
	return sc
}

// HerdSpan is how much of the mean arrivals a synchronized open-loop start
// sends at once.
const HerdSpan = 250 * time.Millisecond

// Sized returns sc with a provider f times as large and a load f times as
// large: the capacity, the arrival rates and the herd, or the clients and
// the slots.
func (sc Scenario) Sized(f float64) Scenario {
	sc.Capacity *= f
	sc.Rate *= f
	sc.BurstRate *= f
	sc.Herd = int(float64(sc.Herd) * f)
	if sc.Closed != nil {
		cl := *sc.Closed
		cl.Clients = int(float64(cl.Clients) * f)
		cl.Slots = int(float64(cl.Slots) * f)
		sc.Closed = &cl
	}
	return sc
}

// Slowed returns a closed-loop sc whose requests take f times as long and
// whose clients think f times as long: the same load on a provider that
// serves f times fewer requests a second (a model that takes 100ms, not
// 20ms). An open-loop sc is returned as it is.
func (sc Scenario) Slowed(f float64) Scenario {
	if sc.Closed == nil || f == 1 {
		return sc
	}
	cl := *sc.Closed
	cl.Service = time.Duration(float64(cl.Service) * f)
	cl.Think = time.Duration(float64(cl.Think) * f)
	sc.Closed = &cl
	sc.Capacity /= f
	return sc
}

// Result is what one library did in one scenario.
type Result struct {
	Library  string
	Calls    int
	Success  int
	Attempts int
	P50, P99 time.Duration // call latency, successes and failures alike
	P99OK    time.Duration // the p99 of the successful calls' latency
	// OutageAttempts are the attempts that reached the provider during the
	// outage window.
	OutageAttempts int
	// Recovered reports whether a metastable provider was healthy again at
	// the end, and RecoveredAfter how long after the trigger ended it last
	// became so.
	Recovered      bool
	RecoveredAfter time.Duration
	// Duration is the scenario's, over which Goodput counts.
	Duration time.Duration
	// Series are the attempts per Interval.
	Series []int
}

// AttemptsPerCall is the attempts made per call.
func (r Result) AttemptsPerCall() float64 { return float64(r.Attempts) / float64(max(r.Calls, 1)) }

// Goodput is the successful calls a second, over the scenario's duration.
func (r Result) Goodput() float64 { return float64(r.Success) / max(r.Duration.Seconds(), 1e-9) }

// SuccessShare is the share of calls that succeeded.
func (r Result) SuccessShare() float64 { return float64(r.Success) / float64(max(r.Calls, 1)) }

// Run plays sc against a fresh provider with every call made through r.
// seed fixes the arrivals.
func Run(ctx context.Context, sc Scenario, r bench.Retrier, seed uint64) Result {
	if sc.Closed != nil {
		return runClosed(ctx, sc, r, seed)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	arrivals := make([]time.Duration, sc.Herd)
	for i := range arrivals {
		arrivals[i] = time.Duration(i) * sc.HerdSpread / time.Duration(max(sc.Herd, 1))
	}
	for t := time.Duration(0); ; {
		t += time.Duration(rng.ExpFloat64() / sc.rateAt(t) * float64(time.Second))
		if t >= sc.Duration {
			break
		}
		arrivals = append(arrivals, t)
	}

	start := time.Now()
	p := newProvider(sc, start)
	var (
		wg        sync.WaitGroup
		success   atomic.Int64
		latencies = make([]time.Duration, len(arrivals))
		ok        = make([]bool, len(arrivals))
	)
	op := bench.Op(p.request)
	for i, at := range arrivals {
		if d := time.Until(start.Add(at)); d > 0 {
			timer := time.NewTimer(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
			}
		}
		if ctx.Err() != nil {
			arrivals = arrivals[:i]
			latencies, ok = latencies[:i], ok[:i]
			break
		}
		wg.Go(func() {
			began := time.Now()
			if r.Do(ctx, op) == nil {
				success.Add(1)
				ok[i] = true
			}
			latencies[i] = time.Since(began)
		})
	}
	wg.Wait()

	res := Result{Library: r.Name(), Calls: len(arrivals), Success: int(success.Load())}
	p.summarise(&res)
	var okLatencies []time.Duration
	for i, d := range latencies {
		if ok[i] {
			okLatencies = append(okLatencies, d)
		}
	}
	res.setLatencies(latencies, okLatencies)
	return res
}

// setLatencies sets the quantiles of the calls' latencies, all of them and
// the successful ones'.
func (res *Result) setLatencies(all, ok []time.Duration) {
	slices.Sort(all)
	slices.Sort(ok)
	res.P50, res.P99 = quantile(all, 0.5), quantile(all, 0.99)
	res.P99OK = quantile(ok, 0.99)
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(math.Min(float64(len(sorted)-1), q*float64(len(sorted))))]
}

// summarise fills in res what the provider saw: the attempts over time,
// during the outage, and whether it recovered.
func (p *provider) summarise(res *Result) {
	sc := p.sc
	p.mu.Lock()
	res.Series = slices.Clone(p.attempts)
	res.Duration = sc.Duration
	p.settle(int(min(time.Since(p.start), sc.Duration) / Interval))
	recoveredAt := p.collapse.recoveredAt
	down := p.collapse.down
	p.mu.Unlock()
	for i, n := range res.Series {
		res.Attempts += n
		at := time.Duration(i) * Interval
		if at >= sc.OutageStart && at < sc.OutageEnd {
			res.OutageAttempts += n
		}
	}
	if sc.Metastable {
		res.Recovered = !down
		if res.Recovered && recoveredAt >= 0 {
			res.RecoveredAfter = recoveredAt - sc.TriggerEnd()
		}
	}
}

package storm

import (
	"time"

	"github.com/steadfast-go/steadfast/bench"
	"github.com/steadfast-go/steadfast/budget"
	sfretry "github.com/steadfast-go/steadfast/retry"
)

// Capacity is the simulated provider's: requests a second.
const Capacity = 2000

// Scenarios are the four storms of the performance targets (bench/README.md).
var Scenarios = []Scenario{
	{
		// (a) Overload without outage: bursts of 160% of capacity for 100ms,
		// then lulls of 60% for 100ms (110% on average). Retries move work
		// from the bursts into the lulls.
		Name: "overload", Duration: 2500 * time.Millisecond, Rate: 0.6 * Capacity, Capacity: Capacity,
		BurstRate: 1.6 * Capacity, BurstPeriod: 200 * time.Millisecond,
	},
	{
		// (b) A total outage window under a normal load.
		Name: "outage", Duration: 3 * time.Second, Rate: 0.8 * Capacity, Capacity: Capacity,
		OutageStart: time.Second, OutageEnd: 2 * time.Second,
	},
	{
		// (c) A metastable provider: a surge of the load to twice its
		// rate (160 % of the capacity) for a second triggers a collapse to
		// a tenth of its capacity, which lasts until its load has stayed
		// at most its capacity for a second (see collapse): a second
		// after the surge under the load of no retrying.
		Name: "collapse", Duration: 5 * time.Second, Rate: 0.8 * Capacity, Capacity: Capacity,
		SpikeStart: 700 * time.Millisecond, SpikeEnd: 1700 * time.Millisecond, SpikeFactor: 2,
		Metastable: true, CollapsedShare: 0.1,
	},
	{
		// (d) The same collapse, deeper: the provider recovers only once
		// its load has stayed under 40 % of its capacity for a second,
		// which no retrying's load (80 %) never is.
		Name: "deep-collapse", Duration: 5 * time.Second, Rate: 0.8 * Capacity, Capacity: Capacity,
		SpikeStart: 700 * time.Millisecond, SpikeEnd: 1700 * time.Millisecond, SpikeFactor: 2,
		Metastable: true, CollapsedShare: 0.1, RecoverShare: 0.4,
	},
}

// RoundTrip is how long an answer takes to come back in the storms
// played with one (Scenario.WithRoundTrip): a few milliseconds, as from a
// provider in the same region.
const RoundTrip = 5 * time.Millisecond

// Policy is every library's: 4 attempts, 10ms doubling to 80ms, 10% jitter.
var Policy = bench.Policy{Attempts: 4, Initial: 10 * time.Millisecond, Factor: 2, Max: 80 * time.Millisecond, Jitter: 0.1}

// Recommended budget: the steadfast setting that meets all three scenarios.
const (
	BudgetTokens = 300
	BudgetRatio  = 2
)

// Budget is the steadfast budget setting of a run.
var Budget = struct{ Tokens, Ratio float64 }{BudgetTokens, BudgetRatio}

// FailsafeBudgetRate is the share of in-flight executions failsafe-go's
// budget lets be retries.
const FailsafeBudgetRate = 0.2

// Contenders returns a fresh Retrier of every library: the no-retry
// baseline, steadfast without and with its shared budget, and the peers.
// Budgets are shared by all the calls of a run, as by the clients of one
// provider.
func Contenders(p bench.Policy) []bench.Retrier {
	return []bench.Retrier{
		bench.NoRetry(),
		bench.Steadfast("steadfast", p, quiet()...),
		bench.Steadfast("steadfast+budget", p, append(quiet(), sfretry.WithBudget(sfretry.NewTokenBudget(Budget.Tokens, Budget.Ratio)))...),
		bench.Steadfast("steadfast+adaptive", p, append(quiet(), sfretry.WithBudget(Adaptive()))...),
		bench.Cenkalti(p),
		bench.Avast(p),
		bench.Sethvargo(p),
		bench.Failsafe(p, 0),
		bench.Failsafe(p, FailsafeBudgetRate),
	}
}

// Peers are the peer libraries among Contenders that the storms' targets
// hold steadfast against.
var Peers = []string{"cenkalti/backoff", "avast/retry-go", "sethvargo/go-retry", "failsafe-go"}

// AdaptiveSetting is steadfast+adaptive's budget setting:
// retry.RecommendedBudget's unless a flag changes it.
var AdaptiveSetting = budget.DefaultSetting()

// Adaptive returns a new budget of the law of package budget, of
// AdaptiveSetting.
func Adaptive() sfretry.Budget {
	b, err := budget.NewAdaptive(AdaptiveSetting)
	if err != nil {
		panic(err) // a bad flag
	}
	return b
}

// Storm is a scenario with the policy every library runs it with.
type Storm struct {
	Scenario Scenario
	Policy   bench.Policy
}

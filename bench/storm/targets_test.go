package storm

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/bench"
)

// runs is how many seeds each library plays a shape with. The provider
// model and the arrivals are seeded, but the libraries' jitter is their
// own and unseeded: one run of a shape varies by a few points. The
// targets compare the mean success share over the runs, and the medians
// of the other figures. A smaller provider has fewer clients, whose
// successes move its share more from one run to the next: it plays more
// runs (runsAt), so that every size's mean rests on as many calls.
const runs = 5

// runsAt is how many runs a shape of the size plays: runs, and for a size
// under 1, as many more as make up as many calls as size 1's (a quarter's
// mean over 5 runs moved by ±0.4 points from one go to the next, and
// failed its half a point once in twenty).
func runsAt(size float64) int {
	return int(math.Ceil(runs / min(size, 1)))
}

// outcome is what a library did over the runs of a shape.
type outcome struct {
	success        float64 // share of the calls, the mean over the runs
	outageAttempts int
	recovered      bool // in every run
	recoveredAfter time.Duration
	p99OK          time.Duration // the successful calls' latency
	runs           []float64     // each run's success share
}

// runAll plays sc n times for no-retry, steadfast with the recommended
// budget and the peers, each run in a synctest bubble of its own (virtual
// time), and returns what each did.
func runAll(t *testing.T, sc Scenario, policy bench.Policy, n int) map[string]outcome {
	t.Helper()
	want := map[string]bool{"no-retry": true, "steadfast+adaptive": true}
	for _, p := range Peers {
		want[p] = true
	}
	out := make(map[string]outcome)
	for i, r := range Contenders(policy) {
		if !want[r.Name()] {
			continue
		}
		var succ []float64
		var atts []int
		var after, p99 []time.Duration
		o := outcome{recovered: true}
		for seed := range uint64(n) {
			synctest.Test(t, func(t *testing.T) {
				// A budget made outside the bubble would read the real clock.
				res := Run(context.Background(), sc, Contenders(policy)[i], seed+1)
				succ, atts = append(succ, res.SuccessShare()), append(atts, res.OutageAttempts)
				after, p99 = append(after, res.RecoveredAfter), append(p99, res.P99OK)
				o.recovered = o.recovered && res.Recovered
			})
		}
		o.success, o.outageAttempts, o.recoveredAfter, o.p99OK = mean(succ), median(atts), median(after), median(p99)
		o.runs = succ
		out[r.Name()] = o
	}
	return out
}

func mean(v []float64) float64 {
	var sum float64
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

func median[T int | time.Duration](v []T) T {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

func bestPeer(res map[string]outcome) (string, float64) {
	name, best := "", -1.0
	for _, p := range Peers {
		if s := res[p].success; s > best {
			name, best = p, s
		}
	}
	return name, best
}

// The performance targets of the three storms (bench/README.md), when
// every client starts at once (a herd: a deploy, a cron) and when the
// starts are staggered (arrivals as they come), for a provider a quarter,
// one and four times the default size with the load scaled alike, in
// virtual time: (a) an overload's success at least the best peer's less
// half a point; (b) an outage's attempts during the outage at most 1.2
// times no retrying's, its success no lower; (c) a collapse recovered in
// at most half the time no retrying takes, with a success share at least
// 10 points above. Each open-loop storm is played twice: with a provider
// that answers at once, and with one whose answers take a round trip of
// RoundTrip, where a herd's first attempts go over a round trip, as over a
// network; the closed-loop storms (ClosedScenarios) once each.
// bench/cmd/storm runs them in real time.
func TestStormTargets(t *testing.T) {
	skipSlow(t)
	for _, size := range []float64{0.25, 1, 4} {
		for i, base := range append(slices.Clone(Scenarios), ClosedScenarios...) {
			policy, shape := Policy, strings.TrimPrefix(base.Name, "closed-")
			scs := []Scenario{base.Synchronized().Sized(size), base.Sized(size),
				base.Synchronized().Sized(size).WithRoundTrip(RoundTrip), base.Sized(size).WithRoundTrip(RoundTrip)}
			if i >= len(Scenarios) {
				policy = ClosedPolicy
				scs = scs[:2]
			}
			for _, sc := range scs {
				t.Run(fmt.Sprintf("%s/x%v", sc.Name, size), func(t *testing.T) {
					onOneP(t)
					res := runAll(t, sc, policy, runsAt(size))
					for _, name := range append([]string{"no-retry", "steadfast+adaptive"}, Peers...) {
						o := res[name]
						t.Logf("| %s | ×%v | %s | %.1f %% | %v | %d |", sc.Name, size, name, 100*o.success, o.p99OK.Round(time.Millisecond), o.outageAttempts)
					}
					checkTargets(t, shape, res)
				})
			}
		}
	}
}

// checkTargets holds the outcomes of a storm of the shape named to its
// targets (TestStormTargets).
func checkTargets(t *testing.T, shape string, res map[string]outcome) {
	t.Helper()
	sf, none := res["steadfast+adaptive"], res["no-retry"]
	peer, best := bestPeer(res)
	t.Logf("steadfast %.1f %% %.3f (%d attempts in the outage), no retry %.1f %% (%d), best peer %s %.1f %%",
		100*sf.success, sf.runs, sf.outageAttempts, 100*none.success, none.outageAttempts, peer, 100*best)
	switch shape {
	case "overload":
		if sf.success < best-0.005 {
			t.Errorf("success %.1f %% (runs %.3f), want at least %s's %.1f %% less 0.5", 100*sf.success, sf.runs, peer, 100*best)
		}
	case "outage":
		if float64(sf.outageAttempts) > 1.2*float64(none.outageAttempts) || sf.success < none.success {
			t.Errorf("%d attempts in the outage and %.1f %% success, want at most 1.2 × no retrying's %d and at least its %.1f %%",
				sf.outageAttempts, 100*sf.success, none.outageAttempts, 100*none.success)
		}
	case "collapse":
		if !sf.recovered || !none.recovered || sf.recoveredAfter > none.recoveredAfter/2 ||
			sf.success < none.success+0.10 {
			t.Errorf("recovered %v after %v, success %.1f %%; no retrying %v after %v, %.1f %%: want half its time, 10 points more",
				sf.recovered, sf.recoveredAfter, 100*sf.success, none.recovered, none.recoveredAfter, 100*none.success)
		}
	}
}

// onOneP runs a storm on one P. On two, the goroutines of a bubble
// interleave differently from run to run: a herd's first attempts go
// before or after the first failures are counted, and its retries ask
// before or after the last of its failures is, as the scheduler has it,
// which makes the same seed different storms. One P makes each storm the
// same on every run, and the one in which every retry of a herd asks
// after the failures before it are counted, the order that bunched the
// herd's retries before their turns were spaced (bench/README.md).
func onOneP(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
}

// skipSlow skips the storms under the race detector, whose instrumentation
// makes them minutes long; .ci/run runs them once without it.
func skipSlow(t *testing.T) {
	if raceEnabled {
		t.Skip("the storms' targets run without -race (.ci/run)")
	}
}

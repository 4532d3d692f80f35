package deadline

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/bench/storm"
)

// runs is how many seeds each library plays a shape with; the targets
// compare the mean success share over them (and log the median p99), the
// libraries' own jitter being unseeded. The spike's thousands of calls a
// run make its share steady in a few runs; the other shapes' few hundred
// calls move one run's share by a few points either way (the overload's
// by up to 8 against the best peer's), so that five runs would now and
// then fail a target met on average, and thirty hold it.
func runs(s Shape) uint64 {
	if s.Name == "spike" {
		return 5
	}
	return 30
}

// means plays s with deadline d runs times for steadfast with the
// recommended budget and the peers, each run in a synctest bubble of its
// own (virtual time), and returns each library's mean success share,
// logging it beside the median p99 of its successful calls.
func means(t *testing.T, s Shape, d time.Duration) map[string]float64 {
	t.Helper()
	want := map[string]bool{"no-retry": true, "steadfast+adaptive": true}
	for _, p := range storm.Peers {
		want[p] = true
	}
	out := make(map[string]float64)
	for i, r := range storm.Contenders(Policy) {
		if !want[r.Name()] {
			continue
		}
		var succ []float64
		var p99 []time.Duration
		for seed := range runs(s) {
			synctest.Test(t, func(t *testing.T) {
				// A budget made outside the bubble would read the real clock.
				res := Run(context.Background(), s, storm.Contenders(Policy)[i], d, seed+1)
				succ, p99 = append(succ, res.SuccessShare()), append(p99, res.P99)
			})
		}
		slices.Sort(p99)
		var sum float64
		for _, x := range succ {
			sum += x
		}
		out[r.Name()] = sum / float64(len(succ))
		t.Logf("| %s | %v | %s | %.1f %% | %v |", s.Name, d, r.Name(), 100*out[r.Name()], p99[len(p99)/2].Round(time.Millisecond))
	}
	return out
}

// With a deadline on every call of 12× and 50× the provider's service time
// (240 ms and 1 s), the recommended budget's success is at least the best
// peer's less 2 points in an overload and a token-bucket spike, and at
// least the best peer's in a collapse and in a 5 s outage (#53). The
// outage under 240 ms is the narrow one: the budget wins it on the calls
// made after the provider's return, whose retries a budget that judged
// them by the outage's would refuse (every one of them, for two seconds:
// 94 % of those calls succeeded, against the peers' 100 %).
func TestDeadlineStormTargets(t *testing.T) {
	if raceEnabled {
		t.Skip("the storms' targets run without -race (.ci/run)")
	}
	for _, s := range Shapes {
		for _, d := range Deadlines[1:] {
			t.Run(s.Name+"/"+d.String(), func(t *testing.T) {
				res := means(t, s, d)
				peer, best := "", -1.0
				for _, p := range storm.Peers {
					if res[p] > best {
						peer, best = p, res[p]
					}
				}
				sf := res["steadfast+adaptive"]
				t.Logf("steadfast %.1f %%, best peer %s %.1f %%", 100*sf, peer, 100*best)
				margin := 0.0
				if s.Name == "overload" || s.Name == "spike" {
					margin = 0.02
				}
				switch key := s.Name + "/" + d.String(); {
				case sf >= best-margin && knownMisses[key]:
					t.Logf("met, though listed as a known miss: %s", key)
				case sf >= best-margin:
				case knownMisses[key]:
					t.Logf("NOT MET, a known miss (bench/README.md): success %.1f %%, want at least %s's %.1f %% less %.0f points",
						100*sf, peer, 100*best, 100*margin)
				default:
					t.Errorf("success %.1f %%, want at least %s's %.1f %% less %.0f points", 100*sf, peer, 100*best, 100*margin)
				}
			})
		}
	}
}

// knownMisses are the shapes whose target the budget's law (#69) misses
// (bench/README.md "The budget's one law"): each is reported, not failed;
// any other miss fails. A miss mended is taken off the list, never one
// added to fit a change.
var knownMisses = map[string]bool{"overload/240ms": true, "outage/240ms": true, "outage/1s": true}

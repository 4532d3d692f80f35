package concurrency

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// results plays StepPhases with every contender in a synctest bubble of
// its own (virtual time) and logs the table of bench/README.md.
func results(t *testing.T) map[string]Result {
	t.Helper()
	out := map[string]Result{}
	for i, name := range Names {
		synctest.Test(t, func(t *testing.T) {
			res, err := Run(i, StepPhases, 1)
			if err != nil {
				t.Fatal(err)
			}
			out[name] = res
			row := "| " + name + " |"
			for _, ph := range res.Phases {
				row += " " + pct(ph.Goodput) + " |"
			}
			t.Logf("%s %s | %d |", row, pct(res.LimitedShare()), res.OK)
		})
	}
	return out
}

func pct(x float64) string { return fmt.Sprintf("%.1f %%", 100*x) }

// What the adaptive limit holds in virtual time, one run of each
// contender beside the others (#55): goodput at least 90 % of the capacity
// in every phase, from 10 s after a step (down ×4, up ×4); 429s at most
// 2.5 % of the requests; ahead of failsafe-go's adaptive limiter on the
// run's mean goodput and on 429s. The issue asks more, not met yet and
// named in bench/README.md: 429s at most 2 %, and within 5 % of a fixed
// limit at the true capacity in every phase.
func TestConcurrencyHolds(t *testing.T) {
	if raceEnabled {
		t.Skip("the bench runs without -race")
	}
	r := results(t)
	sf, fs := r[Names[0]], r[Names[1]]
	for _, ph := range sf.Phases {
		if ph.Goodput < 0.9 {
			t.Errorf("%s: steadfast's goodput %.1f %% of the capacity, want at least 90 %%", ph.Phase.Name, 100*ph.Goodput)
		}
	}
	if m, f := meanGoodput(sf), meanGoodput(fs); m <= f {
		t.Errorf("steadfast's mean goodput %.1f %%, failsafe-go's %.1f %%: want ahead", 100*m, 100*f)
	}
	if s := sf.LimitedShare(); s > 0.025 || s >= fs.LimitedShare() {
		t.Errorf("steadfast's 429s %.2f %% of requests, failsafe-go's %.2f %%: want at most 2.5 %% and fewer", 100*s, 100*fs.LimitedShare())
	}
}

func meanGoodput(r Result) float64 {
	var sum float64
	for _, ph := range r.Phases {
		sum += ph.Goodput
	}
	return sum / float64(len(r.Phases))
}

// With batch work saturating the provider, an interactive call's p99 is
// at most 1.2× its p99 on an idle provider, and no batch call waits
// longer than MaxStarvation for a permit (an answered attempt takes at
// most that and its answer).
func TestPrioritiesHold(t *testing.T) {
	if raceEnabled {
		t.Skip("the bench runs without -race")
	}
	synctest.Test(t, func(t *testing.T) {
		res, err := RunPriority(1)
		if err != nil {
			t.Fatal(err)
		}
		ratio := res.LoadedP99.Seconds() / res.IdleP99.Seconds()
		t.Logf("interactive p99 idle %v, beside batch work %v (%.2f×); longest batch attempt %v, %d batch answers",
			res.IdleP99.Round(time.Millisecond), res.LoadedP99.Round(time.Millisecond), ratio, res.LongestBatch.Round(time.Millisecond), res.BatchAnswers)
		if ratio > 1.2 {
			t.Errorf("interactive p99 %.2f× its p99 on an idle provider, want at most 1.2×", ratio)
		}
		if most := PriorityStarvation + 3*time.Second; res.LongestBatch > most { // its longest answer is 2.3 s
			t.Errorf("a batch attempt took %v, want at most MaxStarvation %v and its own answer", res.LongestBatch, PriorityStarvation)
		}
	})
}

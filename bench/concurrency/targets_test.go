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
// in every phase, from 10 s after a step (down ×4, up ×4), and at least
// 95 % of a fixed limit's at the true capacity; 429s at most 2 % of the
// requests; ahead of failsafe-go's adaptive limiter on the run's mean
// goodput and on 429s.
func TestConcurrencyHolds(t *testing.T) {
	if raceEnabled {
		t.Skip("the bench runs without -race")
	}
	r := results(t)
	sf, fs, fixed := r[Names[0]], r[Names[1]], r[Names[2]]
	for i, ph := range sf.Phases {
		if ph.Goodput < 0.9 {
			t.Errorf("%s: steadfast's goodput %.1f %% of the capacity, want at least 90 %%", ph.Phase.Name, 100*ph.Goodput)
		}
		if f := fixed.Phases[i].Goodput; ph.Goodput < 0.95*f {
			t.Errorf("%s: steadfast's goodput %.1f %%, the fixed limit's %.1f %%: want within 5 %% of it", ph.Phase.Name, 100*ph.Goodput, 100*f)
		}
	}
	if m, f := meanGoodput(sf), meanGoodput(fs); m <= f {
		t.Errorf("steadfast's mean goodput %.1f %%, failsafe-go's %.1f %%: want ahead", 100*m, 100*f)
	}
	if s := sf.LimitedShare(); s > 0.02 || s >= fs.LimitedShare() {
		t.Errorf("steadfast's 429s %.2f %% of requests, failsafe-go's %.2f %%: want at most 2 %% and fewer", 100*s, 100*fs.LimitedShare())
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
// most that and its answer); steadfast ahead of failsafe-go's priority
// limiter, in the same run, on that ratio, on answers and on 429s.
func TestPrioritiesHold(t *testing.T) {
	if raceEnabled {
		t.Skip("the bench runs without -race")
	}
	res := make([]PriorityResult, len(PriorityNames))
	for i, name := range PriorityNames {
		synctest.Test(t, func(t *testing.T) {
			r, err := RunPriority(i, 1)
			if err != nil {
				t.Fatal(err)
			}
			res[i] = r
			t.Logf("| %s | %v | %v | %.2f× | %v | %d | %d | %.2f %% |", name, r.IdleP99.Round(time.Millisecond), r.LoadedP99.Round(time.Millisecond),
				r.ratio(), r.LongestBatch.Round(time.Millisecond), r.BatchAnswers, r.Answers, 100*r.Limited)
		})
	}
	sf, fs := res[0], res[1]
	if sf.ratio() > 1.2 {
		t.Errorf("interactive p99 %.2f× its p99 on an idle provider, want at most 1.2×", sf.ratio())
	}
	if most := PriorityStarvation + 3*time.Second; sf.LongestBatch > most { // its longest answer is 2.3 s
		t.Errorf("a batch attempt took %v, want at most MaxStarvation %v and its own answer", sf.LongestBatch, PriorityStarvation)
	}
	if sf.ratio() >= fs.ratio() || sf.Answers <= fs.Answers || sf.Limited > fs.Limited {
		t.Errorf("steadfast %.2f×, %d answers, %.2f %% 429s; failsafe-go %.2f×, %d, %.2f %%: want ahead on each",
			sf.ratio(), sf.Answers, 100*sf.Limited, fs.ratio(), fs.Answers, 100*fs.Limited)
	}
}

// ratio is the loaded interactive p99 over the idle one.
func (r PriorityResult) ratio() float64 { return r.LoadedP99.Seconds() / r.IdleP99.Seconds() }

// A run's series reads steadfast's limit from its gauge: above 0 once
// calls have come.
func TestSeriesReadsTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, err := Run(0, []Phase{{"start", 40, time.Second, 2 * time.Second}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Series) != 3 || res.Series[2].Limit <= 0 || res.Series[2].Capacity != 40 {
			t.Errorf("series %+v, want 3 seconds with the limit read", res.Series)
		}
	})
}

package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/steadfast-go/steadfast/bench/storm"
)

// targets prints whether lib met the storm targets (bench/README.md,
// DESIGN §12) in one family's overload, outage, collapse and deep
// collapse results.
func targets(w io.Writer, family, lib string, results [][]storm.Result) {
	find := func(rs []storm.Result, name string) (storm.Result, bool) {
		for _, r := range rs {
			if r.Library == name {
				return r, true
			}
		}
		return storm.Result{}, false
	}
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT MET"
	}
	overload, outage, collapse, deep := results[0], results[1], results[2], results[3]
	me, ok := find(overload, lib)
	if !ok {
		return
	}
	fmt.Fprintf(w, "\n### Targets of %s, %s\n\n", lib, familyName(family))

	best, bestName := -1.0, ""
	for _, r := range overload {
		if isPeer(r.Library) && r.SuccessShare() > best {
			best, bestName = r.SuccessShare(), r.Library
		}
	}
	fmt.Fprintf(w, "- (a) overload: success %.1f%%, best peer (%s) %.1f%%, at least %.1f%% wanted: %s\n",
		100*me.SuccessShare(), bestName, 100*best, 100*best-1, mark(me.SuccessShare() >= best-0.01))

	me, _ = find(outage, lib)
	none, _ := find(outage, "no-retry")
	ratio := float64(me.OutageAttempts) / float64(max(none.OutageAttempts, 1))
	fmt.Fprintf(w, "- (b) outage: attempts in the outage %.2fx no retry's (at most 1.20x), success %.1f%% vs no retry's %.1f%%: %s\n",
		ratio, 100*me.SuccessShare(), 100*none.SuccessShare(), mark(ratio <= 1.2 && me.SuccessShare() >= none.SuccessShare()))

	me, _ = find(collapse, lib)
	none, _ = find(collapse, "no-retry")
	fmt.Fprintf(w, "- (c) collapse: recovered %s after the trigger, no retry %s (at most half wanted); success %.1f%% vs no retry's %.1f%% (+10 points wanted); goodput %.0f/s vs %.0f/s (as much wanted): %s\n",
		recovery(me), recovery(none), 100*me.SuccessShare(), 100*none.SuccessShare(), me.Goodput(), none.Goodput(),
		mark(recoveredInHalf(me, none) && me.SuccessShare() >= none.SuccessShare()+0.10 && me.Goodput() >= none.Goodput()))

	me, _ = find(deep, lib)
	none, _ = find(deep, "no-retry")
	fmt.Fprintf(w, "- (d) deep collapse: recovered %s after the trigger, no retry %s (within 3s wanted); goodput %.0f/s vs %.0f/s: %s\n",
		recovery(me), recovery(none), me.Goodput(), none.Goodput(), mark(me.Recovered && me.RecoveredAfter <= 3*time.Second))

	// What it costs (no target): the tail of the successful calls, and the
	// calls served, each against the best peer's.
	for i, rs := range results {
		me, _ := find(rs, lib)
		var fast, most storm.Result
		for _, r := range rs {
			if !isPeer(r.Library) {
				continue
			}
			if fast.Library == "" || r.P99OK < fast.P99OK {
				fast = r
			}
			if most.Library == "" || r.Success > most.Success {
				most = r
			}
		}
		fmt.Fprintf(w, "- cost, %s: p99 of successes %v vs %v (%s); served %d vs %d (%s)\n", [4]string{"overload", "outage", "collapse", "deep collapse"}[i],
			me.P99OK.Round(100*time.Microsecond), fast.P99OK.Round(100*time.Microsecond), fast.Library, me.Success, most.Success, most.Library)
	}
}

func isPeer(lib string) bool { return lib != "no-retry" && !strings.HasPrefix(lib, "steadfast") }

func recovery(r storm.Result) string {
	if !r.Recovered {
		return "never"
	}
	return r.RecoveredAfter.Round(time.Millisecond).String()
}

// recoveredInHalf reports whether r recovered in at most half the time
// base did; when base never recovered, recovering at all is enough.
func recoveredInHalf(r, base storm.Result) bool {
	switch {
	case !r.Recovered:
		return false
	case !base.Recovered:
		return true
	}
	return r.RecoveredAfter <= base.RecoveredAfter/2
}

// familyName names a family by its overload scenario's name.
func familyName(overload string) string {
	name := "open loop"
	if strings.Contains(overload, "closed") {
		name = "closed loop"
	}
	if strings.HasPrefix(overload, "sync-") {
		name += ", synchronized start"
	}
	return name
}

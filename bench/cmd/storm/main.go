// Command storm runs the retry-storm scenarios of bench/README.md for every
// library and reports attempts per call, success share, latency, attempts
// during the outage and whether the collapsed provider recovered. It writes
// the tables, the raw time series and plots of attempts over time to
// -out/storm/size-<size>.
//
//	go run ./cmd/storm                    # the default size, about 6 minutes
//	go run ./cmd/storm -sizes 1,0.25,4    # and providers 4x smaller and larger
//	go run ./cmd/storm -rtt 5ms           # every open-loop answer after a 5 ms round trip
//	go run ./cmd/storm -quick             # a short smoke run
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/steadfast-go/steadfast/bench"
	"github.com/steadfast-go/steadfast/bench/cli"
	"github.com/steadfast-go/steadfast/bench/storm"
)

// The flags of storm's own; -quick and -out are cli.Main's.
var (
	seed   = flag.Uint64("seed", 1, "seed of the arrivals")
	only   = flag.String("scenario", "", "run only these scenarios, comma-separated")
	libs   = flag.String("libs", "", "run only these libraries, comma-separated (no-retry always runs: it is the baseline)")
	sizes  = flag.String("sizes", "1", "provider sizes to run, comma-separated: 4 is a provider, and a load, four times the default")
	replot = flag.Bool("replot", false, "run nothing: draw the plots again from the series in -out")
	slow   = flag.Float64("slow", 1, "closed loop only: a provider whose requests take this many times as long (the clients think as much longer), for as many times fewer requests a second")
	rtt    = flag.Duration("rtt", 0, "open loop only: every answer takes this long to come back, a refusal as a success (storm.RoundTrip is CI's); the scenarios are named rtt-…")
)

func main() {
	flag.Float64Var(&storm.Budget.Tokens, "budget-tokens", storm.BudgetTokens, "steadfast+budget's maxTokens")
	flag.Float64Var(&storm.Budget.Ratio, "budget-ratio", storm.BudgetRatio, "steadfast+budget's tokenRatio")
	flag.Float64Var(&storm.AdaptiveSetting.K, "adaptive-k", storm.AdaptiveSetting.K, "steadfast+adaptive's K")
	flag.Float64Var(&storm.AdaptiveSetting.Ratio, "adaptive-ratio", storm.AdaptiveSetting.Ratio, "steadfast+adaptive's Ratio")
	flag.Float64Var(&storm.AdaptiveSetting.Floor, "adaptive-floor", storm.AdaptiveSetting.Floor, "steadfast+adaptive's Floor")
	flag.DurationVar(&storm.AdaptiveSetting.Window, "adaptive-window", storm.AdaptiveSetting.Window, "steadfast+adaptive's Window")
	flag.DurationVar(&storm.AdaptiveSetting.MaxWait, "adaptive-wait", storm.AdaptiveSetting.MaxWait, "steadfast+adaptive's MaxWait")
	cli.Main("storm", "scale every scenario down to a quarter, judge no target, and write nothing", runSizes)
}

// runSizes runs, or draws again, every provider size of -sizes, each in
// out/storm/size-<size>.
func runSizes(ctx context.Context, w io.Writer, quick bool, out string) error {
	for _, f := range strings.Split(*sizes, ",") {
		size, err := strconv.ParseFloat(f, 64)
		if err != nil || !(size > 0) {
			return fmt.Errorf("-sizes: %q is not a positive number", f)
		}
		if !(*slow >= 1) {
			return fmt.Errorf("-slow: %v is less than 1", *slow)
		}
		dir := filepath.Join(out, "storm", "size-"+f)
		if *replot {
			err = replotAll(dir, size)
		} else {
			err = run(ctx, w, *seed, quick, size, dir, *only, *libs)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// storms are the scenarios of one provider size with their policies, in
// families of four: overload, outage, collapse, deep collapse.
func storms(size float64) [][]storm.Storm {
	var open, closed []storm.Storm
	for _, sc := range storm.Scenarios {
		if *rtt > 0 {
			sc = sc.WithRoundTrip(*rtt)
		}
		open = append(open, storm.Storm{Scenario: sc.Sized(size), Policy: storm.Policy})
	}
	for _, sc := range storm.ClosedScenarios {
		closed = append(closed, storm.Storm{Scenario: sc.Sized(size).Slowed(*slow), Policy: storm.ClosedPolicy})
	}
	sync := func(family []storm.Storm) []storm.Storm {
		var out []storm.Storm
		for _, st := range family {
			st.Scenario = st.Scenario.Synchronized()
			out = append(out, st)
		}
		return out
	}
	return [][]storm.Storm{open, sync(open), closed, sync(closed)}
}

func run(ctx context.Context, w io.Writer, seed uint64, quick bool, size float64, out, only, libs string) error {
	if !quick {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
	}
	var report strings.Builder
	mw := io.MultiWriter(w, &report)
	fmt.Fprintf(mw, "# provider size %v\n\nseed %d; open-loop policy: %d attempts, %v doubling to %v, jitter %.0f%%; open-loop provider capacity %.0f/s\n",
		size, seed, storm.Policy.Attempts, storm.Policy.Initial, storm.Policy.Max, storm.Policy.Jitter*100, storm.Capacity*size)
	fmt.Fprintf(mw, "steadfast+adaptive: budget.NewAdaptive(%+v); steadfast+budget: NewTokenBudget(%v, %v); failsafe-go+budget: WithMaxRate(%v)\n",
		storm.AdaptiveSetting,
		storm.Budget.Tokens, storm.Budget.Ratio, storm.FailsafeBudgetRate)
	for _, family := range storms(size) {
		var results [][]storm.Result
		for _, st := range family {
			sc := st.Scenario
			if only != "" && !slices.Contains(strings.Split(only, ","), sc.Name) {
				continue
			}
			if quick {
				sc = sc.Scaled(0.25)
			}
			res, err := runScenario(ctx, mw, sc, st.Policy, seed, libs)
			if err != nil {
				return err
			}
			results = append(results, res)
			if quick {
				continue
			}
			if err := writeSeries(filepath.Join(out, sc.Name+".csv"), res); err != nil {
				return err
			}
			if err := plotSeries(filepath.Join(out, sc.Name+".png"), sc, res); err != nil {
				return err
			}
		}
		switch {
		case quick:
			// The budget's windows and waits do not shrink with the
			// scenarios: the targets speak of full-length runs only.
		case len(results) == len(family):
			targets(mw, family[0].Scenario.Name, "steadfast+adaptive", results)
		}
	}
	if quick {
		return nil
	}
	return os.WriteFile(filepath.Join(out, "storm.txt"), []byte(report.String()), 0o644)
}

// runScenario runs sc for every library and prints its table.
func runScenario(ctx context.Context, w io.Writer, sc storm.Scenario, policy bench.Policy, seed uint64, libs string) ([]storm.Result, error) {
	began := time.Now()
	var results []storm.Result
	for i, r := range storm.Contenders(policy) {
		if i > 0 && libs != "" && !slices.Contains(strings.Split(libs, ","), r.Name()) {
			continue
		}
		results = append(results, storm.Run(ctx, sc, r, seed))
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if sc.Closed != nil {
		cl := sc.Closed
		fmt.Fprintf(w, "\n## %s (%v, closed loop: %d clients thinking %v on average, %d slots of %v; policy %d attempts, %v doubling to %v, jitter %.0f%%",
			sc.Name, sc.Duration, cl.Clients, cl.Think, cl.Slots, cl.Service, policy.Attempts, policy.Initial, policy.Max, 100*policy.Jitter)
		if cl.Synchronized {
			fmt.Fprint(w, ", every first call at the start")
		}
	} else {
		fmt.Fprintf(w, "\n## %s (%v, %.0f calls/s", sc.Name, sc.Duration, sc.MeanRate())
		if sc.Herd > 0 {
			fmt.Fprintf(w, " after a herd of %d at the start", sc.Herd)
		}
	}
	if sc.BurstRate > 0 {
		fmt.Fprintf(w, " on average: %.0f/s and %.0f/s by turns every %v", sc.BurstRate, sc.Rate, sc.BurstPeriod/2)
	}
	if sc.OutageEnd > sc.OutageStart {
		fmt.Fprintf(w, ", outage %v-%v", sc.OutageStart, sc.OutageEnd)
	}
	if sc.SpikeFactor > 0 {
		fmt.Fprintf(w, ", load ×%v %v-%v", sc.SpikeFactor, sc.SpikeStart, sc.SpikeEnd)
	}
	if sc.Metastable {
		share := sc.RecoverShare
		if share == 0 {
			share = 1
		}
		fmt.Fprintf(w, ", collapsed to %v of its capacity until a second at most %v of it", sc.CollapsedShare, share)
	}
	fmt.Fprintf(w, "; ran in %.1fs)\n\n", time.Since(began).Seconds())
	table(w, sc, results)
	return results, nil
}

func table(w io.Writer, sc storm.Scenario, results []storm.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	header := "library\tcalls\tattempts/call\tsuccess\tgoodput/s\tp50\tp99\tp99 of successes"
	if sc.OutageEnd > sc.OutageStart {
		header += "\tattempts in outage\tvs no-retry"
	}
	if sc.Metastable {
		header += "\trecovered"
	}
	fmt.Fprintln(tw, header+"\t")
	base := results[0].OutageAttempts
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.1f%%\t%.0f\t%v\t%v\t%v", r.Library, r.Calls, r.AttemptsPerCall(),
			100*r.SuccessShare(), r.Goodput(), r.P50.Round(100*time.Microsecond), r.P99.Round(100*time.Microsecond), r.P99OK.Round(100*time.Microsecond))
		if sc.OutageEnd > sc.OutageStart {
			fmt.Fprintf(tw, "\t%d\t%.2fx", r.OutageAttempts, float64(r.OutageAttempts)/float64(max(base, 1)))
		}
		if sc.Metastable {
			if r.Recovered {
				fmt.Fprintf(tw, "\tyes, %v after the trigger", r.RecoveredAfter.Round(time.Millisecond))
			} else {
				fmt.Fprint(tw, "\tno")
			}
		}
		fmt.Fprintln(tw, "\t")
	}
	tw.Flush()
}

func writeSeries(path string, results []storm.Result) error {
	var b strings.Builder
	b.WriteString("ms")
	for _, r := range results {
		b.WriteString("," + r.Library)
	}
	b.WriteString("\n")
	n := 0
	for _, r := range results {
		n = max(n, len(r.Series))
	}
	for i := range n {
		fmt.Fprintf(&b, "%d", i*int(storm.Interval/time.Millisecond))
		for _, r := range results {
			v := 0
			if i < len(r.Series) {
				v = r.Series[i]
			}
			fmt.Fprintf(&b, ",%d", v)
		}
		b.WriteString("\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

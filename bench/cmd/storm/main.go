// Command storm runs the retry-storm scenarios of bench/README.md for every
// library and reports attempts per call, success share, latency, attempts
// during the outage and whether the collapsed provider recovered. It writes
// the tables, the raw time series and plots of attempts over time to -out.
//
//	go run ./cmd/storm            # full run, about 25 s a scenario
//	go run ./cmd/storm -quick     # a short smoke run
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/steadfast-go/steadfast/bench"
	"github.com/steadfast-go/steadfast/bench/storm"
)

func main() {
	seed := flag.Uint64("seed", 1, "seed of the arrivals")
	quick := flag.Bool("quick", false, "scale every scenario down to a quarter, and write nothing")
	out := flag.String("out", "results", "folder for the tables, series and plots")
	only := flag.String("scenario", "", "run only these scenarios, comma-separated")
	libs := flag.String("libs", "", "run only these libraries, comma-separated (no-retry always runs: it is the baseline)")
	flag.Float64Var(&storm.Budget.Tokens, "budget-tokens", storm.BudgetTokens, "steadfast+budget's maxTokens")
	flag.Float64Var(&storm.Budget.Ratio, "budget-ratio", storm.BudgetRatio, "steadfast+budget's tokenRatio")
	flag.Float64Var(&storm.AdaptiveSetting.Ratio, "adaptive-ratio", storm.AdaptiveSetting.Ratio, "steadfast+adaptive's ratio")
	flag.Float64Var(&storm.AdaptiveSetting.MinPerSecond, "adaptive-min", storm.AdaptiveSetting.MinPerSecond, "steadfast+adaptive's minPerSecond")
	flag.DurationVar(&storm.AdaptiveSetting.MaxWait, "adaptive-wait", storm.AdaptiveSetting.MaxWait, "steadfast+adaptive's maxWait")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, *seed, *quick, *out, *only, *libs); err != nil {
		fmt.Fprintln(os.Stderr, "storm:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, seed uint64, quick bool, out, only, libs string) error {
	if !quick {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
	}
	var report strings.Builder
	mw := io.MultiWriter(w, &report)
	fmt.Fprintf(mw, "seed %d; policy: %d attempts, %v doubling to %v, jitter %.0f%%; provider capacity %d/s\n",
		seed, storm.Policy.Attempts, storm.Policy.Initial, storm.Policy.Max, storm.Policy.Jitter*100, storm.Capacity)
	fmt.Fprintf(mw, "steadfast+budget: NewTokenBudget(%v, %v); failsafe-go+budget: WithMaxRate(%v)\n",
		storm.Budget.Tokens, storm.Budget.Ratio, storm.FailsafeBudgetRate)
	type run struct {
		sc     storm.Scenario
		policy bench.Policy
	}
	var runs []run
	for _, sc := range storm.Scenarios {
		runs = append(runs, run{sc, storm.Policy})
	}
	for _, sc := range storm.ClosedScenarios {
		runs = append(runs, run{sc, storm.ClosedPolicy})
	}
	for _, rn := range runs {
		sc := rn.sc
		if only != "" && !slices.Contains(strings.Split(only, ","), sc.Name) {
			continue
		}
		if quick {
			sc = sc.Scaled(0.25)
		}
		began := time.Now()
		var results []storm.Result
		for i, r := range storm.Contenders(rn.policy) {
			if i > 0 && libs != "" && !slices.Contains(strings.Split(libs, ","), r.Name()) {
				continue
			}
			results = append(results, storm.Run(ctx, sc, r, seed))
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		if sc.Closed != nil {
			cl := sc.Closed
			fmt.Fprintf(mw, "\n## %s (%v, closed loop: %d clients thinking %v on average, %d slots of %v; policy %d attempts, %v doubling to %v, jitter %.0f%%",
				sc.Name, sc.Duration, cl.Clients, cl.Think, cl.Slots, cl.Service, rn.policy.Attempts, rn.policy.Initial, rn.policy.Max, 100*rn.policy.Jitter)
		} else {
			fmt.Fprintf(mw, "\n## %s (%v, %.0f calls/s", sc.Name, sc.Duration, sc.MeanRate())
		}
		if sc.BurstRate > 0 {
			fmt.Fprintf(mw, " on average: %.0f/s and %.0f/s by turns every %v", sc.BurstRate, sc.Rate, sc.BurstPeriod/2)
		}
		if sc.OutageEnd > sc.OutageStart {
			fmt.Fprintf(mw, ", outage %v-%v", sc.OutageStart, sc.OutageEnd)
		}
		fmt.Fprintf(mw, "; ran in %.1fs)\n\n", time.Since(began).Seconds())
		table(mw, sc, results)
		if quick {
			continue
		}
		if err := writeSeries(filepath.Join(out, sc.Name+".csv"), results); err != nil {
			return err
		}
		if sc.OutageEnd > sc.OutageStart {
			if err := plotSeries(filepath.Join(out, sc.Name+".png"), sc, results); err != nil {
				return err
			}
		}
	}
	if quick {
		return nil
	}
	return os.WriteFile(filepath.Join(out, "storm.txt"), []byte(report.String()), 0o644)
}

func table(w io.Writer, sc storm.Scenario, results []storm.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	header := "library\tcalls\tattempts/call\tsuccess\tp50\tp99"
	if sc.OutageEnd > sc.OutageStart {
		header += "\tattempts in outage\tvs no-retry"
	}
	if sc.Metastable {
		header += "\trecovered"
	}
	fmt.Fprintln(tw, header+"\t")
	base := results[0].OutageAttempts
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.1f%%\t%v\t%v", r.Library, r.Calls, r.AttemptsPerCall(),
			100*r.SuccessShare(), r.P50.Round(100*time.Microsecond), r.P99.Round(100*time.Microsecond))
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

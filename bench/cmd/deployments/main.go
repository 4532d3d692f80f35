// Command deployments runs the many-deployments scenario of
// bench/README.md: one model on three deployments, one throttled for a
// while and one three times slower, through a retry layer around one
// deployment, round-robin, the pool, and the pool with affinity. It prints
// each variant's success, latency and load, checks the pool's targets, and
// writes the table and a plot to -out.
//
//	go run ./cmd/deployments            # the committed run, about a minute
//	go run ./cmd/deployments -quick     # a short smoke run that writes nothing
package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/steadfast-go/steadfast/bench/chart"
	"github.com/steadfast-go/steadfast/bench/cli"
	"github.com/steadfast-go/steadfast/bench/deployments"
)

func main() { cli.Main("deployments", "3 s runs, and write nothing", run) }

func run(ctx context.Context, w io.Writer, quick bool, out string) error {
	sc := deployments.Default
	if quick {
		sc.Run, sc.Throttle = 3*time.Second, [2]time.Duration{time.Second, 2 * time.Second}
	}
	var report strings.Builder
	mw := io.MultiWriter(w, &report)
	fmt.Fprintf(mw, "3 deployments of %d slots, %v a call ±20 %% (the slow one 3× slower with 3× the slots); %.0f %% of their capacity offered for %v; "+
		"one answers 429, Retry-After %v, from %v to %v; a warm prompt cache makes a call 40 %% faster; retry: 3 retries, 50 ms doubling to 1 s\n\n",
		sc.Slots, sc.Latency, 100*sc.Load, sc.Run, sc.Hint, sc.Throttle[0], sc.Throttle[1])
	tw := tabwriter.NewWriter(mw, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tsuccess\tp50\tp99\tmean\trequests/call\tto the throttled one while throttled\tsession on one deployment\tcache hits\ton the slow one")
	var results []*deployments.Result
	for _, v := range deployments.Variants {
		r, err := deployments.Run(ctx, sc, v)
		if err != nil {
			return fmt.Errorf("%s: %w", v.Name, err)
		}
		results = append(results, r)
		fmt.Fprintln(tw, r)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	pl, aff, healthy := results[2], results[3], results[4]
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT MET"
	}
	fmt.Fprintf(mw, "\ntargets for the pool:\n")
	fmt.Fprintf(mw, "  success ≥ 99.5 %%: pool %.2f %%, with affinity %.2f %%: %s\n",
		100*pl.Success(), 100*aff.Success(), mark(pl.Success() >= 0.995 && aff.Success() >= 0.995))
	fmt.Fprintf(mw, "  at most one request to the throttled deployment per hint: pool %d, with affinity %d, for %d hints: %s\n",
		pl.ThrottledRequests, aff.ThrottledRequests, pl.Hints, mark(pl.ThrottledRequests <= pl.Hints && aff.ThrottledRequests <= aff.Hints))
	fmt.Fprintf(mw, "  p99 at most 1.2× the healthy deployments': pool %v, with affinity %v, healthy %v (%.2f×, %.2f×): %s\n",
		pl.P99.Round(100*time.Microsecond), aff.P99.Round(100*time.Microsecond), healthy.P99.Round(100*time.Microsecond),
		float64(pl.P99)/float64(healthy.P99), float64(aff.P99)/float64(healthy.P99),
		mark(float64(pl.P99) <= 1.2*float64(healthy.P99) && float64(aff.P99) <= 1.2*float64(healthy.P99)))
	fmt.Fprintf(mw, "  with affinity, ≥ 95 %% of a session's calls on one deployment while it is healthy: %.1f %%: %s\n",
		100*aff.SessionStickiness, mark(aff.SessionStickiness >= 0.95))
	fmt.Fprintf(mw, "  with affinity, a lower mean latency than without: %v against %v: %s\n",
		aff.Mean.Round(100*time.Microsecond), pl.Mean.Round(100*time.Microsecond), mark(aff.Mean < pl.Mean))
	if quick {
		return nil
	}
	p, err := plotDeployments(results)
	if err != nil {
		return err
	}
	return chart.Save(out, "deployments", report.String(), p, 28*vg.Centimeter, 14*vg.Centimeter)
}

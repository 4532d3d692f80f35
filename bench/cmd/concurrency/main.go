// Command concurrency runs the hidden-capacity scenario of bench/README.md
// in real time: 120 closed-loop clients against a provider whose capacity
// steps from 40 to 10 and back to 40, through steadfast's
// ratelimit.Concurrency, failsafe-go's adaptive limiter, a fixed limit at
// the true capacity and no limit, one after the other. It prints each
// one's goodput by phase and its 429s, and writes the table and plots of
// goodput and of steadfast's limit over time to -out. The CI check
// (TestConcurrencyHolds) plays the same in virtual time.
//
//	go run ./cmd/concurrency          # the committed run, about 6 minutes
//	go run ./cmd/concurrency -quick   # phases of 3 s, and write nothing
package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/steadfast-go/steadfast/bench/chart"
	"github.com/steadfast-go/steadfast/bench/cli"
	"github.com/steadfast-go/steadfast/bench/concurrency"
)

func main() { cli.Main("concurrency", "phases of 3 s, and write nothing", run) }

func run(ctx context.Context, w io.Writer, quick bool, out string) error {
	phases := concurrency.StepPhases
	if quick {
		phases = nil
		for _, ph := range concurrency.StepPhases {
			ph.Settle, ph.Measured = time.Second, 2*time.Second
			phases = append(phases, ph)
		}
	}
	var report strings.Builder
	mw := io.MultiWriter(w, &report)
	fmt.Fprintf(mw, "%d closed-loop clients; capacity %d, then %d, then %d; each phase measured over %v from %v after its step; real time, seed 1\n\n",
		concurrency.Clients, phases[0].Capacity, phases[1].Capacity, phases[2].Capacity, phases[0].Measured, phases[0].Settle)
	tw := tabwriter.NewWriter(mw, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "limiter\tgoodput, start\tdown ×4\tup ×4\t429s, share of requests\tanswers")
	var results []concurrency.Result
	for i := range concurrency.Names {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := concurrency.Run(i, phases, 1)
		if err != nil {
			return fmt.Errorf("%s: %w", concurrency.Names[i], err)
		}
		results = append(results, r)
		fmt.Fprintf(tw, "%s\t%.1f %%\t%.1f %%\t%.1f %%\t%.1f %%\t%d\n", r.Name,
			100*r.Phases[0].Goodput, 100*r.Phases[1].Goodput, 100*r.Phases[2].Goodput, 100*r.LimitedShare(), r.OK)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if quick {
		return nil
	}
	gp, err := plotGoodput(results)
	if err != nil {
		return err
	}
	if err := chart.Save(out, "concurrency", report.String(), gp, 28*vg.Centimeter, 12*vg.Centimeter); err != nil {
		return err
	}
	lp, err := plotLimit(results[0])
	if err != nil {
		return err
	}
	return lp.Save(28*vg.Centimeter, 10*vg.Centimeter, filepath.Join(out, "concurrency-limit.png"))
}

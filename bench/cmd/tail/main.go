// Command tail runs the tail-latency scenario of bench/README.md: a
// provider whose first-token latency has a heavy tail, called without
// hedging and with each hedging policy. It prints p50, p99, max and the
// extra load, and writes the table and a plot to -out.
//
//	go run ./cmd/tail            # the committed run, a few seconds
//	go run ./cmd/tail -quick     # a short smoke run that writes nothing
package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot/vg"

	"github.com/steadfast-go/steadfast/bench/chart"
	"github.com/steadfast-go/steadfast/bench/cli"
	"github.com/steadfast-go/steadfast/bench/tail"
)

func main() { cli.Main("tail", "a tenth of the calls, and write nothing", run) }

func run(ctx context.Context, w io.Writer, quick bool, out string) error {
	sc := tail.Default
	if quick {
		sc.Calls /= 10
	}
	var report strings.Builder
	mw := io.MultiWriter(w, &report)
	fmt.Fprintf(mw, "%d calls by %d clients; first token %v ±20%%, %.0f%% of requests 10× slower; fixed hedging delay %v; at most 1 hedge\n\n",
		sc.Calls, sc.Clients, sc.Fast, 100*sc.SlowShare, sc.FixedDelay)
	tw := tabwriter.NewWriter(mw, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tp50\tp99\tmax\textra requests\tfailed")
	var results []tail.Result
	for _, v := range tail.Variants {
		r, err := tail.Run(ctx, sc, v)
		if err != nil {
			return fmt.Errorf("%s: %w", v.Name, err)
		}
		results = append(results, r)
		fmt.Fprintln(tw, r)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if quick {
		return nil
	}
	p, err := plotTail(results)
	if err != nil {
		return err
	}
	return chart.Save(out, "tail", report.String(), p, 28*vg.Centimeter, 14*vg.Centimeter)
}

// Command fleet runs the fleet scenario of bench/README.md: 8 replicas
// sharing a provider's tokens-per-minute quota, under even and uneven load,
// each limited by a local bucket of the whole quota, a local bucket of an
// eighth of it, or the fleet module's bucket shared through Redis; then the
// shared bucket again while a Redis of its own is stopped for the middle
// third of the run and started again empty, second by second. It prints
// the quota used and the share of 429s, and writes the table and a plot to
// -out. It needs a Redis server at REDIS_ADDR, and redis-server installed.
//
//	REDIS_ADDR=localhost:6379 go run ./cmd/fleet          # the committed run, about two minutes
//	REDIS_ADDR=localhost:6379 go run ./cmd/fleet -quick   # a short smoke run that writes nothing
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/steadfast-go/steadfast/bench/chart"
	"github.com/steadfast-go/steadfast/bench/cli"
	"github.com/steadfast-go/steadfast/bench/quota"
)

func main() { cli.Main("fleet", "3 s runs instead of 20 s, and write nothing", run) }

func run(ctx context.Context, w io.Writer, quick bool, out string) error {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		return errors.New("set REDIS_ADDR to a Redis server's host:port (redis-server --port 6390 --save '' &, then REDIS_ADDR=localhost:6390)")
	}
	sc := quota.Default
	if quick {
		sc.Run, sc.Warm = 3*time.Second, time.Second
	}
	var report strings.Builder
	mw := io.MultiWriter(w, &report)
	fmt.Fprintf(mw, "%d replicas offering %.1f× a quota of %.0f tokens per (compressed) minute for %v; "+
		"a call uses 150-750 tokens (450 on average) and is estimated at its prompt plus a cap of 500; "+
		"uneven: 2 replicas carry 70 %% of the calls\n\n", sc.Replicas, sc.Offered, sc.Quota, sc.Run)
	tw := tabwriter.NewWriter(mw, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "limiter\tload\tquota used\t429s\trequests\t429\tshed locally")
	var results []quota.Result
	for _, load := range quota.Loads {
		for _, lim := range []quota.Limiter{quota.LocalWhole, quota.LocalShare, quota.Shared(addr)} {
			r, err := quota.Run(ctx, sc, lim, load)
			if err != nil {
				return fmt.Errorf("%s, %s load: %w", lim.Name, load.Name, err)
			}
			if r.Degraded {
				return fmt.Errorf("%s, %s load: the limiter fell back from Redis; the run does not count", lim.Name, load.Name)
			}
			results = append(results, r)
			fmt.Fprintln(tw, r)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(mw, "\nquota used: tokens served from the end of the warm-up (%v) to the end of the run / what the quota allows in that time\n", sc.Warm)
	if _, err := outage(ctx, mw, sc); err != nil {
		return fmt.Errorf("outage: %w", err)
	}
	if quick {
		return nil
	}
	p, err := plotFleet(results)
	if err != nil {
		return err
	}
	return chart.Save(out, "fleet", report.String(), p, 30*vg.Centimeter, 15*vg.Centimeter)
}

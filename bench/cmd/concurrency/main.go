// Command concurrency runs the hidden-capacity scenario of bench/README.md
// in real time: 120 closed-loop clients against a provider whose capacity
// steps from 40 to 10 and back to 40, through steadfast's
// ratelimit.Concurrency, failsafe-go's adaptive limiter, a fixed limit at
// the true capacity and no limit, one after the other. It prints each
// one's goodput by phase and its 429s, and writes the table and plots of
// goodput and of steadfast's limit over time to -out. The CI check
// (TestConcurrencyHolds) plays the same in virtual time.
//
// With -fleet N it plays the same with the clients spread over N
// fleet.Concurrency replicas sharing one limit on the Redis at REDIS_ADDR,
// and writes concurrency-fleet.txt and its plot of the replicas' limit.
//
//	go run ./cmd/concurrency -out results/concurrency   # the committed run, about 6 minutes
//	go run ./cmd/concurrency -quick   # phases of 3 s, and write nothing
//	REDIS_ADDR=localhost:6390 go run ./cmd/concurrency -fleet 6 -out results/concurrency
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
	"gonum.org/v1/plot/vg"

	"github.com/steadfast-go/steadfast/bench/chart"
	"github.com/steadfast-go/steadfast/bench/cli"
	"github.com/steadfast-go/steadfast/bench/concurrency"
)

var replicas = flag.Int("fleet", 0, "play only steadfast, its clients spread over this many fleet.Concurrency replicas sharing one limit on the Redis at REDIS_ADDR")

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
	if *replicas > 0 {
		return runFleet(w, quick, out, phases)
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

// runFleet plays the phases with the clients spread over -fleet replicas
// sharing one limit on Redis.
func runFleet(w io.Writer, quick bool, out string, phases []concurrency.Phase) error {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		return errors.New("-fleet: set REDIS_ADDR to a Redis server's host:port (redis-server --port 6390 --save '' &, then REDIS_ADDR=localhost:6390)")
	}
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer client.Close()
	var id [6]byte
	_, _ = rand.Read(id[:])
	r, err := concurrency.RunFleet(client, "bench-concurrency-"+hex.EncodeToString(id[:]), *replicas, phases, 1)
	if err != nil {
		return err
	}
	var report strings.Builder
	mw := io.MultiWriter(w, &report)
	fmt.Fprintf(mw, "%d closed-loop clients over %d replicas sharing one limit on Redis (fleet.NewConcurrency); capacity %d, then %d, then %d; each phase measured over %v from %v after its step; real time, seed 1\n\n",
		concurrency.Clients, *replicas, phases[0].Capacity, phases[1].Capacity, phases[2].Capacity, phases[0].Measured, phases[0].Settle)
	tw := tabwriter.NewWriter(mw, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "limiter\tgoodput, start\tdown ×4\tup ×4\t429s, share of requests\tanswers")
	fmt.Fprintf(tw, "%s\t%.1f %%\t%.1f %%\t%.1f %%\t%.2f %%\t%d\n", r.Name,
		100*r.Phases[0].Goodput, 100*r.Phases[1].Goodput, 100*r.Phases[2].Goodput, 100*r.LimitedShare(), r.OK)
	if err := tw.Flush(); err != nil || quick {
		return err
	}
	lp, err := plotLimit(r)
	if err != nil {
		return err
	}
	lp.Title.Text = "the fleet's limit (the replicas' shares summed) and the hidden capacity"
	return chart.Save(out, "concurrency-fleet", report.String(), lp, 28*vg.Centimeter, 10*vg.Centimeter)
}

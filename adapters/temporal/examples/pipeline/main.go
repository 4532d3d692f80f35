// Command pipeline runs the news pipeline of steadfast's examples/pipeline
// as Temporal workflows: one workflow per article, whose two LLM calls
// (a summary, then a sentiment) are activities made through steadfast's
// retry layer with temporal.Activity, over a simulated LLM that answers
// 429 with probability -rate-limit. An article whose calls outlast their
// attempts is dead-lettered by an activity of its own; the table of the
// in-memory pipeline is printed at the end.
//
// Without -address it starts a Temporal development server in the
// process; with one, it runs against that server (its namespace is
// -namespace), so that a worker killed mid-run can be started again:
//
//	go run ./pipeline -articles=3 -workers=2 -rate-limit=1.0
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

func main() {
	var cfg config
	flag.IntVar(&cfg.articles, "articles", 5, "articles to process")
	flag.IntVar(&cfg.workers, "workers", 2, "Temporal workers, each running one activity at a time")
	flag.Float64Var(&cfg.rateLimit, "rate-limit", 0.3, "probability that an LLM call is answered 429, in [0, 1]")
	flag.Uint64Var(&cfg.seed, "seed", uint64(time.Now().UnixNano()), "seed of the simulated LLM's 429s")
	flag.DurationVar(&cfg.latency, "latency", 10*time.Millisecond, "the simulated LLM's latency")
	flag.StringVar(&cfg.address, "address", "", "host:port of a Temporal server; empty starts a development server in the process")
	flag.StringVar(&cfg.namespace, "namespace", "default", "the namespace, with -address")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(2)
	}
	s.print(os.Stdout, cfg)
}

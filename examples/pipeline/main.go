// Command pipeline processes news articles concurrently through a
// simulated LLM that answers 429 with probability -rate-limit: each article
// is summarised, then its sentiment taken, each call behind a RetryRunnable
// (3 attempts, 100ms base, 2s cap, 20% jitter) and, with -limiter and
// -breaker, a token bucket and a circuit breaker. It prints every failed
// attempt, every dead-lettered article and a summary. Ctrl-C cancels the
// pipeline: backoffs end at once and unfinished articles are reported as
// cancelled. With -chaos, the failures are the chaos package's faults, in
// a provider's shapes.
//
//	go run ./examples/pipeline -articles=5 -workers=2 -rate-limit=0.3
//	go run ./examples/pipeline -chaos -seed=7 -workers=1 -articles=20 -rate-limit=0.5
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
	flag.IntVar(&cfg.workers, "workers", 2, "concurrent workers")
	flag.Float64Var(&cfg.rateLimit, "rate-limit", 0.3, "probability that an LLM call is answered 429, in [0, 1]")
	flag.BoolVar(&cfg.limiter, "limiter", false, "put a token bucket of -rps calls per second in front of the LLM")
	flag.Float64Var(&cfg.rps, "rps", 10, "the token bucket's rate, with -limiter")
	flag.BoolVar(&cfg.breaker, "breaker", false, "put a circuit breaker (opens after 5 consecutive failures) in front of the LLM")
	flag.Uint64Var(&cfg.seed, "seed", uint64(time.Now().UnixNano()), "seed of the simulated LLM's 429s")
	flag.DurationVar(&cfg.latency, "latency", 10*time.Millisecond, "the simulated LLM's latency")
	flag.BoolVar(&cfg.chaos, "chaos", false, "inject chaos faults (429s with a Retry-After, overloads, 500s, a spent quota) at about -rate-limit instead of the simulated LLM's 429s; reproducible with -seed and -workers=1")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s, err := runPipeline(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(2)
	}
	s.print(os.Stdout, cfg)
}

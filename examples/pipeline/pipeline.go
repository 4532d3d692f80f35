package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/chaos"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// config is the pipeline's command line.
type config struct {
	articles  int
	workers   int
	rateLimit float64 // probability of a 429 per LLM call
	limiter   bool    // put a token bucket in front of the LLM
	rps       float64 // the bucket's rate, calls per second
	breaker   bool    // put a circuit breaker in front of the LLM
	seed      uint64
	latency   time.Duration // the simulated LLM's latency
	chaos     bool          // the failures are chaos faults, not the simulated LLM's 429s
}

func (c config) validate() error {
	switch {
	case c.articles < 0:
		return fmt.Errorf("-articles is %d, must not be negative", c.articles)
	case c.workers < 1:
		return fmt.Errorf("-workers is %d, must be at least 1", c.workers)
	case !(c.rateLimit >= 0 && c.rateLimit <= 1):
		return fmt.Errorf("-rate-limit is %v, must be within [0, 1]", c.rateLimit)
	case c.limiter && !(c.rps > 0):
		return fmt.Errorf("-rps is %v, must be positive with -limiter", c.rps)
	}
	return nil
}

// Outcomes of an article. Every article that did not succeed has failed;
// the dead letters are those failures worth re-driving later.
const (
	succeeded  = "succeeded"
	failed     = "failed"      // a permanent error, or cancelled
	deadLetter = "dead letter" // failed: transient failures outlasted the retries
)

type result struct {
	outcome string
	err     error
}

// summary is what the pipeline reports at the end. failed counts every
// article that did not succeed, dead letters included.
type summary struct {
	articles, succeeded, failed, deadLetter, retries int
	duration                                         time.Duration
	// met counts the failed attempts by their error.type.
	met map[string]int
}

type articleKey struct{}

// runPipeline processes cfg.articles articles on cfg.workers workers: each
// article is summarised, then its sentiment taken, each an LLM call behind
// retries (and, if asked, a breaker and a rate limiter). Every article
// produces exactly one result. Cancelling ctx ends backoffs at once; the
// articles not finished are reported as cancelled.
func runPipeline(ctx context.Context, cfg config, w io.Writer) (summary, error) {
	if err := cfg.validate(); err != nil {
		return summary{}, err
	}
	start := time.Now()
	out := &syncWriter{w: w}
	var retries atomic.Int64
	met := &tally{n: map[string]int{}}

	policy := retry.RetryConfig{
		MaxRetries:     2, // 3 attempts in all
		InitialBackoff: 100 * time.Millisecond,
		MaxBackoff:     2 * time.Second,
		Jitter:         0.2,
	}
	onRetry := retry.WithOnRetry(func(ctx context.Context, ev retry.RetryEvent) {
		retries.Add(1)
		met.add(retry.ErrorType(ev.Err))
		out.printf("[article %d] attempt %d failed (%v), retrying in %v\n",
			ctx.Value(articleKey{}), ev.Attempt, ev.Err, ev.Delay.Round(time.Millisecond))
	})
	layers := []core.Middleware{retry.Middleware(policy, onRetry)}
	if cfg.breaker {
		layers = append(layers, breaker.Middleware(gobreaker.Settings{
			Name:        "llm",
			Timeout:     5 * time.Second,
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 5 },
		}))
	}
	if cfg.limiter {
		layers = append(layers, ratelimit.Middleware(ratelimit.InProcess(rate.NewLimiter(rate.Limit(cfg.rps), 1))))
	}
	model := core.Runnable(&simulatedLLM{rateLimit: cfg.rateLimit, seed: cfg.seed, latency: cfg.latency})
	if cfg.chaos {
		model = chaos.New(&simulatedLLM{latency: cfg.latency}, faults(cfg)...)
	}
	llm := core.Chain(model, layers...)

	jobs := make(chan int, cfg.articles)
	for a := 1; a <= cfg.articles; a++ {
		jobs <- a
	}
	close(jobs)
	results := make([]result, cfg.articles+1)
	var wg sync.WaitGroup
	for range cfg.workers {
		wg.Go(func() {
			for a := range jobs {
				res := process(ctx, llm, a)
				results[a] = res
				if res.err != nil && !errors.Is(res.err, context.Canceled) {
					met.add(retry.ErrorType(res.err)) // the last attempt's
				}
				switch {
				case res.outcome == deadLetter:
					out.printf("[article %d] %s\n", a, deadLetterLine(res.err))
				case errors.Is(res.err, context.Canceled):
					out.printf("[article %d] cancelled\n", a)
				case res.outcome == failed:
					out.printf("[article %d] failed: %v\n", a, res.err)
				}
			}
		})
	}
	wg.Wait()

	s := summary{articles: cfg.articles, retries: int(retries.Load()), duration: time.Since(start), met: met.n}
	for _, r := range results[1:] {
		if r.outcome == succeeded {
			s.succeeded++
			continue
		}
		s.failed++
		if r.outcome == deadLetter {
			s.deadLetter++
		}
	}
	return s, nil
}

// process runs one article's tasks in order; the first that fails ends it.
func process(ctx context.Context, llm core.Runnable, article int) result {
	ctx = context.WithValue(ctx, articleKey{}, article)
	for _, kind := range []string{"summarise", "sentiment"} {
		if err := ctx.Err(); err != nil {
			return result{outcome: failed, err: err}
		}
		_, err := llm.Invoke(ctx, task{article: article, kind: kind}, core.WithOperation("llm."+kind))
		if err != nil {
			return result{outcome: classify(err), err: err}
		}
	}
	return result{outcome: succeeded}
}

// classify sorts a failed article: transient failures that outlasted the
// retries, or an open circuit, go to the dead-letter queue; permanent
// errors and cancellations have failed.
func classify(err error) string {
	var re *retry.Error
	if !errors.As(err, &re) {
		return failed
	}
	switch {
	case re.Outcome == retry.OutcomeExhausted, re.Outcome == retry.OutcomeBudgetExhausted,
		re.Outcome == retry.OutcomeRetryAfterTooLong, errors.Is(err, gobreaker.ErrOpenState):
		return deadLetter
	}
	return failed
}

// deadLetterLine says how a dead-lettered article's retries ended and the
// last error: "exhausted 3 attempts — dead letter: llm: rate limit
// exceeded (429)".
func deadLetterLine(err error) string {
	re, _ := errors.AsType[*retry.Error](err) // every dead letter is one
	how := fmt.Sprintf("%s after %d attempts", re.Outcome, re.Attempts)
	if re.Outcome == retry.OutcomeExhausted {
		how = fmt.Sprintf("exhausted %d attempts", re.Attempts)
	}
	return fmt.Sprintf("%s — dead letter: %v", how, re.Err)
}

func (s summary) print(w io.Writer, cfg config) {
	source := ""
	if cfg.chaos {
		source = fmt.Sprintf(", chaos faults, seed %d", cfg.seed)
	}
	fmt.Fprintf(w, "Retry pipeline: %d articles, rate-limit=%.0f%%%s\n", s.articles, cfg.rateLimit*100, source)
	fmt.Fprintf(w, "Succeeded: %d | Failed: %d | Dead letter: %d\n", s.succeeded, s.failed, s.deadLetter)
	fmt.Fprintf(w, "Total retries: %d | Duration: %.3fs\n", s.retries, s.duration.Seconds())
	if len(s.met) == 0 {
		return
	}
	fmt.Fprintf(w, "%-24s %s\n", "Failed attempts: error.type", "attempts")
	for _, typ := range slices.Sorted(maps.Keys(s.met)) {
		fmt.Fprintf(w, "  %-22s %8d\n", typ, s.met[typ])
	}
}

// tally counts the failed attempts by their error.type.
type tally struct {
	mu sync.Mutex
	n  map[string]int
}

func (t *tally) add(typ string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n[typ]++
}

// syncWriter serialises the workers' lines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) printf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, format, args...)
}

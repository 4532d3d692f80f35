package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/temporaltest"

	steadfasttemporal "github.com/steadfast-go/steadfast/adapters/temporal"
	"github.com/steadfast-go/steadfast/retry"
)

// config is the pipeline's command line.
type config struct {
	articles  int
	workers   int
	rateLimit float64 // probability of a 429 per LLM call
	seed      uint64
	latency   time.Duration // the simulated LLM's latency
	address   string        // a Temporal server's host:port; "" starts one in the process
	namespace string
}

func (c config) validate() error {
	switch {
	case c.articles < 0:
		return fmt.Errorf("-articles is %d, must not be negative", c.articles)
	case c.workers < 1:
		return fmt.Errorf("-workers is %d, must be at least 1", c.workers)
	case !(c.rateLimit >= 0 && c.rateLimit <= 1):
		return fmt.Errorf("-rate-limit is %v, must be within [0, 1]", c.rateLimit)
	case c.latency < 0:
		return fmt.Errorf("-latency is %v, must not be negative", c.latency)
	}
	return nil
}

// summary is what the pipeline reports at the end. failed counts every
// article that did not succeed, dead letters included.
type summary struct {
	articles, succeeded, failed, deadLetter, retries int
	duration                                         time.Duration
}

const taskQueue = "steadfast-pipeline"

// quiet drops the SDK's and the server's log lines: the pipeline prints
// its own.
var quiet = log.NewStructuredLogger(slog.New(slog.DiscardHandler))

type articleKey struct{}

// run processes cfg.articles articles, a workflow each, on cfg.workers
// workers, and returns the summary once every workflow has ended.
func run(ctx context.Context, cfg config, w io.Writer) (summary, error) {
	if err := cfg.validate(); err != nil {
		return summary{}, err
	}
	start := time.Now()
	c, stop, err := connect(cfg)
	if err != nil {
		return summary{}, err
	}
	defer stop()
	out := &syncWriter{w: w}

	var retries atomic.Int64
	r, err := retry.New(&llm{rateLimit: cfg.rateLimit, seed: cfg.seed, latency: cfg.latency},
		retry.RetryConfig{MaxRetries: 2, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second, Jitter: 0.2},
		retry.WithOnRetry(func(ctx context.Context, ev retry.RetryEvent) {
			retries.Add(1)
			out.printf("[article %d] attempt %d failed (%v), retrying in %v\n",
				ctx.Value(articleKey{}), ev.Attempt, ev.Err, ev.Delay.Round(time.Millisecond))
		}))
	if err != nil {
		return summary{}, err
	}
	call := steadfasttemporal.Activity[task, string](r)
	llmActivity := func(ctx context.Context, t task) (string, error) {
		return call(context.WithValue(ctx, articleKey{}, t.Article), t)
	}
	deadLetterActivity := func(_ context.Context, article int, line string) error {
		out.printf("[article %d] %s\n", article, line)
		return nil
	}
	for range cfg.workers {
		wk := worker.New(c, taskQueue, worker.Options{
			MaxConcurrentActivityExecutionSize: 1,
			Interceptors:                       []interceptor.WorkerInterceptor{steadfasttemporal.NewWorkerInterceptor()},
		})
		wk.RegisterWorkflowWithOptions(articleWorkflow, workflow.RegisterOptions{Name: "article"})
		wk.RegisterActivityWithOptions(llmActivity, activity.RegisterOptions{Name: "llm"})
		wk.RegisterActivityWithOptions(deadLetterActivity, activity.RegisterOptions{Name: "deadLetter"})
		if err := wk.Start(); err != nil {
			return summary{}, fmt.Errorf("starting a worker: %w", err)
		}
		defer wk.Stop()
	}

	runs := make([]client.WorkflowRun, cfg.articles+1)
	for a := 1; a <= cfg.articles; a++ {
		runs[a], err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID:        fmt.Sprintf("article-%d-%d", a, start.UnixNano()),
			TaskQueue: taskQueue,
		}, "article", a)
		if err != nil {
			return summary{}, fmt.Errorf("starting article %d: %w", a, err)
		}
	}
	s := summary{articles: cfg.articles}
	for a := 1; a <= cfg.articles; a++ {
		var res articleResult
		if err := runs[a].Get(ctx, &res); err != nil {
			res = articleResult{Outcome: failed, Error: err.Error()}
			if ctx.Err() != nil {
				res.Error = "cancelled"
			}
		}
		switch res.Outcome {
		case succeeded:
			s.succeeded++
			continue
		case deadLetter:
			s.deadLetter++
		default:
			out.printf("[article %d] failed: %s\n", a, res.Error)
		}
		s.failed++
	}
	s.retries, s.duration = int(retries.Load()), time.Since(start)
	return s, nil
}

// connect returns a client of the server at cfg.address, or of a
// development server started in the process, and what stops it.
func connect(cfg config) (c client.Client, stop func(), err error) {
	if cfg.address != "" {
		c, err = client.Dial(client.Options{HostPort: cfg.address, Namespace: cfg.namespace, Logger: quiet})
		if err != nil {
			return nil, nil, fmt.Errorf("connecting to %s: %w", cfg.address, err)
		}
		return c, c.Close, nil
	}
	defer func() {
		if p := recover(); p != nil { // temporaltest panics when it cannot start
			err = fmt.Errorf("starting a development server: %v", p)
		}
	}()
	ts := temporaltest.NewServer(temporaltest.WithBaseClientOptions(client.Options{Logger: quiet}))
	return ts.GetDefaultClient(), ts.Stop, nil
}

func (s summary) print(w io.Writer, cfg config) {
	fmt.Fprintf(w, "Retry pipeline: %d articles, rate-limit=%.0f%%\n", s.articles, cfg.rateLimit*100)
	fmt.Fprintf(w, "Succeeded: %d | Failed: %d | Dead letter: %d\n", s.succeeded, s.failed, s.deadLetter)
	fmt.Fprintf(w, "Total retries: %d | Duration: %.3fs\n", s.retries, s.duration.Seconds())
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

// Command llm shows a RetryRunnable in front of a flaky LLM: a 429 with a
// Retry-After hint, a run of 503s, and a 400 that no retry can fix. It
// prints every attempt, its error and the delay chosen, then a summary.
//
//	go run ./examples/llm
//	go run ./examples/llm -stream   # a streaming LLM that fails before and after its first token
//	go run ./examples/llm -resume   # a stream that breaks twice after its first token and completes
//	go run ./examples/llm -trace    # also print every span with the OpenTelemetry stdout exporter
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// apiError is shaped like the errors of LLM provider SDKs: a status code
// and, for 429s, the server's Retry-After hint.
type apiError struct {
	code       int
	retryAfter time.Duration
	msg        string
}

func (e *apiError) Error() string             { return fmt.Sprintf("llm: %s (%d)", e.msg, e.code) }
func (e *apiError) StatusCode() int           { return e.code }
func (e *apiError) RetryAfter() time.Duration { return e.retryAfter }

// flakyLLM answers each prompt with its scripted failures first.
type flakyLLM struct {
	mu       sync.Mutex
	failures map[string][]error
	calls    int
}

func (l *flakyLLM) attempts() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

func (l *flakyLLM) complete(_ context.Context, input any, _ ...core.Option) (any, error) {
	prompt := input.(string)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if errs := l.failures[prompt]; len(errs) > 0 {
		l.failures[prompt] = errs[1:]
		return nil, errs[0]
	}
	return "answer to " + prompt, nil
}

func main() {
	stream := flag.Bool("stream", false, "stream the completions token by token")
	resume := flag.Bool("resume", false, "stream a completion that breaks twice and is resumed")
	traced := flag.Bool("trace", false, "print every span with the OpenTelemetry stdout exporter")
	flag.Parse()
	run := run
	switch {
	case *stream:
		run = runStream
	case *resume:
		run = runResume
	}
	var opts []retry.Option
	if *traced {
		exp, err := stdouttrace.New(stdouttrace.WithPrettyPrint())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		defer tp.Shutdown(context.Background())
		opts = append(opts, retry.WithTracerProvider(tp))
	}
	if err := run(os.Stdout, opts...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1) // the syncer exporter has already written every span
	}
}

func run(w io.Writer, opts ...retry.Option) error {
	llm := &flakyLLM{failures: map[string][]error{
		"summarise the news": {&apiError{code: 429, retryAfter: 300 * time.Millisecond, msg: "rate limit exceeded"}},
		"translate to French": {
			&apiError{code: 503, msg: "service unavailable"},
			&apiError{code: 503, msg: "service unavailable"},
		},
		"an oversized prompt": {&apiError{code: 400, msg: "context length exceeded"}},
	}}

	cfg := retry.RetryConfig{
		MaxRetries:     3,
		InitialBackoff: 100 * time.Millisecond,
		MaxBackoff:     2 * time.Second,
		Jitter:         0.2,
	}
	r, err := retry.New(core.RunnableFunc(llm.complete), cfg, append(opts,
		retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) {
			source := "backoff"
			if ev.Source == "retry_after" {
				source = "server's Retry-After"
			}
			fmt.Fprintf(w, "  attempt %d failed: %v; retrying in %v (%s)\n",
				ev.Attempt, ev.Err, ev.Delay.Round(time.Millisecond), source)
		}))...)
	if err != nil {
		return err
	}

	prompts := []string{"summarise the news", "translate to French", "an oversized prompt"}
	succeeded := 0
	for _, prompt := range prompts {
		fmt.Fprintf(w, "call %q\n", prompt)
		before := llm.attempts()
		start := time.Now()
		out, err := r.Invoke(context.Background(), prompt, core.WithOperation("llm.chat"))
		took := time.Since(start).Round(10 * time.Millisecond)
		if re, ok := errors.AsType[*retry.Error](err); ok {
			fmt.Fprintf(w, "  gave up (%s) after %d attempt(s), %v: %v\n", re.Outcome, re.Attempts, took, re.Err)
			continue
		}
		succeeded++
		fmt.Fprintf(w, "  ok on attempt %d after %v: %v\n", llm.attempts()-before, took, out)
	}
	fmt.Fprintf(w, "\nsummary: %d of %d calls succeeded, %d attempts in all\n", succeeded, len(prompts), llm.attempts())
	return nil
}

// Command tracing runs a few calls through a flaky LLM with the
// OpenTelemetry SDK and prints the finished spans as an indented tree, so
// the shape of a retried call shows without a tracing backend.
//
//	go run ./examples/tracing
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/spantree"
	"github.com/steadfast-go/steadfast/retry"
)

type apiError struct {
	code       int
	retryAfter time.Duration
}

func (e *apiError) Error() string             { return fmt.Sprintf("llm: status %d", e.code) }
func (e *apiError) StatusCode() int           { return e.code }
func (e *apiError) RetryAfter() time.Duration { return e.retryAfter }

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	defer tp.Shutdown(context.Background())

	// The LLM client is instrumented too: its request spans become children
	// of the attempt that made them.
	tracer := tp.Tracer("example/llm-client")
	script := map[string][]error{
		"rate limited": {&apiError{code: 429, retryAfter: 200 * time.Millisecond}},
		"overloaded":   {&apiError{code: 529}, &apiError{code: 503}},
		"bad request":  {&apiError{code: 400}},
	}
	var mu sync.Mutex
	llm := core.RunnableFunc(func(ctx context.Context, in any, _ ...core.Option) (any, error) {
		_, span := tracer.Start(ctx, "llm.request", trace.WithSpanKind(trace.SpanKindClient))
		defer span.End()
		time.Sleep(10 * time.Millisecond) // the provider's latency
		mu.Lock()
		defer mu.Unlock()
		if errs := script[in.(string)]; len(errs) > 0 {
			script[in.(string)] = errs[1:]
			return nil, errs[0]
		}
		return "ok", nil
	})

	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second}
	r, err := retry.New(llm, cfg, retry.WithTracerProvider(tp))
	if err != nil {
		return err
	}
	for _, prompt := range []string{"rate limited", "overloaded", "bad request"} {
		_, _ = r.Invoke(context.Background(), prompt, core.WithOperation("llm.chat"))
		fmt.Fprintf(w, "# %s\n%s\n", prompt, spantree.Render(recorder.Ended(), spantree.Options{Durations: true}))
		recorder.Reset()
	}
	return nil
}

// Command fallback shows what retrying the same model cannot fix. A chat
// stream falls back across three fake models: the first answers 429 with
// a Retry-After of ten minutes, the second never sends its first token in
// time, the third answers; the output shows which answered and why the
// others were skipped, read from the OpenTelemetry spans. Then a model
// whose first token is sometimes slow is hedged.
//
//	go run ./examples/fallback
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/hedge"
	"github.com/steadfast-go/steadfast/retry"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fallback:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	if err := streamWithFallback(w); err != nil {
		return err
	}
	return hedgeSlowFirstTokens(w)
}

// streamWithFallback streams from model-a, else model-b, else model-c,
// each behind its own retry layer.
func streamWithFallback(w io.Writer) error {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	cfg := retry.RetryConfig{
		MaxRetries:        2,
		InitialBackoff:    100 * time.Millisecond,
		MaxBackoff:        time.Second,
		MaxRetryAfter:     30 * time.Second, // a longer wait ends retrying: move on instead
		FirstChunkTimeout: 200 * time.Millisecond,
	}
	var candidates []core.Runnable
	for _, m := range []core.Runnable{quotaSpent{}, silent{}, answering{}} {
		r, err := retry.New(m, cfg, retry.WithTracerProvider(tp))
		if err != nil {
			return err
		}
		candidates = append(candidates, r)
	}
	chat, err := fallback.New(candidates, fallback.WithTracerProvider(tp))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch, err := chat.Stream(ctx, "Say hello")
	if err != nil {
		return err
	}
	answer := ""
	for v := range ch {
		if err, ok := v.(error); ok {
			return err
		}
		answer += v.(string)
	}
	fmt.Fprintln(w, "fallback: one chat stream over three models")
	for _, s := range rec.Ended() {
		if s.Name() != "retry.stream" {
			continue
		}
		a := attrs(s)
		verdict := "skipped"
		if a["retry.outcome"] == "success" {
			verdict = fmt.Sprintf("answered %q", answer)
		}
		fmt.Fprintf(w, "  %-8s %-20s after %s attempt(s), error.type %-8s -> %s\n",
			a["retry.operation"], a["retry.outcome"], a["retry.attempts"], or(a["error.type"], "-"), verdict)
	}
	for _, s := range rec.Ended() {
		if s.Name() == "fallback.stream" {
			a := attrs(s)
			fmt.Fprintf(w, "  answered by candidate %s (%s) after %s switches\n",
				a["fallback.candidate"], a["fallback.candidate.name"], a["fallback.switches"])
		}
	}
	return nil
}

// hedgeSlowFirstTokens makes 10 calls to a model whose first token takes
// 10ms, but 200ms on every fifth call, without hedging and with a hedge
// after 50ms.
func hedgeSlowFirstTokens(w io.Writer) error {
	fmt.Fprintln(w, "hedge: 10 calls, every fifth one slow (200ms instead of 10ms)")
	for _, delay := range []time.Duration{0, 50 * time.Millisecond} {
		model := &sometimesSlow{}
		var r core.Runnable = model
		label := "no hedging"
		if delay > 0 {
			h, err := hedge.New(model, hedge.Config{Delay: delay, MaxHedges: 1})
			if err != nil {
				return err
			}
			r, label = h, fmt.Sprintf("hedge after %v", delay)
		}
		var took []time.Duration
		for range 10 {
			start := time.Now()
			if _, err := r.Invoke(context.Background(), "q"); err != nil {
				return err
			}
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		fmt.Fprintf(w, "  %-16s p50 %-6v max %-6v requests %d\n", label, took[4].Round(time.Millisecond), took[9].Round(time.Millisecond), model.calls.Load())
	}
	return nil
}

func attrs(s sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// streamingLLM streams a completion token by token. Its script: the first
// stream fails before its first token (the retry layer tries again), and
// the stream of a prompt containing "long" breaks after three tokens
// (already delivered: reported, never retried).
type streamingLLM struct {
	mu      sync.Mutex
	streams int
}

func (l *streamingLLM) Invoke(ctx context.Context, in any, opts ...core.Option) (any, error) {
	return nil, errors.New("streamingLLM: use Stream")
}

func (l *streamingLLM) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return nil, errors.New("streamingLLM: use Stream")
}

func (l *streamingLLM) Stream(ctx context.Context, in any, _ ...core.Option) (<-chan any, error) {
	l.mu.Lock()
	l.streams++
	n := l.streams
	l.mu.Unlock()
	prompt := in.(string)
	ch := make(chan any)
	go func() {
		defer close(ch)
		send := func(v any) bool {
			select {
			case ch <- v:
				return true
			case <-ctx.Done():
				return false
			}
		}
		if n == 1 {
			send(&apiError{code: 503, msg: "overloaded before the first token"})
			return
		}
		for i, tok := range strings.Fields("Retries keep a streaming answer whole, never doubled.") {
			if strings.Contains(prompt, "long") && i == 3 {
				send(&apiError{code: 502, msg: "connection dropped mid-stream"})
				return
			}
			time.Sleep(20 * time.Millisecond)
			if !send(tok + " ") {
				return
			}
		}
	}()
	return ch, nil
}

func runStream(w io.Writer, opts ...retry.Option) error {
	llm := &streamingLLM{}
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second, Jitter: 0.2}
	r, err := retry.New(llm, cfg, append(opts, retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) {
		fmt.Fprintf(w, "  [attempt %d failed before the first token: %v; retrying in %v]\n",
			ev.Attempt, ev.Err, ev.Delay.Round(time.Millisecond))
	}))...)
	if err != nil {
		return err
	}
	for _, prompt := range []string{"a short answer", "a long answer"} {
		fmt.Fprintf(w, "stream %q\n", prompt)
		ch, err := r.Stream(context.Background(), prompt, core.WithOperation("llm.stream"))
		if err != nil {
			fmt.Fprintf(w, "failed to start: %v\n", err)
			continue
		}
		indent := "  "
		for v := range ch {
			fmt.Fprint(w, indent) // after any retry notice, which comes before the first value
			indent = ""
			if err, ok := v.(error); ok {
				fmt.Fprintf(w, "\n  stream failed after its first token, not retried: %v", err)
				continue
			}
			fmt.Fprint(w, v)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nsummary: %d streams opened for 2 prompts\n", llm.streams)
	return nil
}

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
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/retry"
)

// token is one chunk of resumableLLM's answer; its position lets a stream
// resume right after it.
type token struct {
	pos  int
	text string
}

func (t token) String() string { return t.text }

// resumableLLM streams its answer token by token and can resume a stream
// after any token it delivered, as OpenAI's background responses can. Its
// script: the first stream's connection drops after 3 tokens, and the
// stream that resumes it stalls (no token, no error) after 3 more.
type resumableLLM struct {
	mu    sync.Mutex
	opens int
}

var answer = strings.Fields("A resumed stream delivers every token once, in order, and nothing is lost when a connection breaks.")

func (l *resumableLLM) Invoke(context.Context, any, ...core.Option) (any, error) {
	return nil, errors.New("resumableLLM: use Stream")
}

func (l *resumableLLM) Batch(context.Context, []any, ...core.Option) ([]any, error) {
	return nil, errors.New("resumableLLM: use Stream")
}

func (l *resumableLLM) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	return l.from(ctx, 0), nil
}

// Resume continues after last, a token this LLM delivered.
func (l *resumableLLM) Resume(ctx context.Context, _ any, last any, _ ...core.Option) (<-chan any, error) {
	t, ok := last.(token)
	if !ok {
		return nil, fmt.Errorf("resumableLLM: cannot resume after %v: %w", last, streams.ErrNotResumable)
	}
	return l.from(ctx, t.pos+1), nil
}

// CanResume reports true: every stream of it resumes.
func (l *resumableLLM) CanResume(context.Context) bool { return true }

func (l *resumableLLM) from(ctx context.Context, pos int) <-chan any {
	l.mu.Lock()
	l.opens++
	n := l.opens
	l.mu.Unlock()
	ch := make(chan any)
	go func() {
		defer close(ch)
		for i := pos; i < len(answer); i++ {
			switch {
			case n == 1 && i == 3:
				send(ctx, ch, io.ErrUnexpectedEOF) // the connection dropped
				return
			case n == 2 && i == pos+3:
				<-ctx.Done() // stalled: ChunkTimeout ends the wait
				return
			}
			time.Sleep(10 * time.Millisecond)
			if !send(ctx, ch, token{pos: i, text: answer[i] + " "}) {
				return
			}
		}
	}()
	return ch
}

func runResume(w io.Writer, opts ...retry.Option) error {
	llm := &resumableLLM{}
	cfg := retry.RetryConfig{
		MaxRetries: 3, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second,
		ChunkTimeout:  200 * time.Millisecond, // a stall after the first token ends in 200ms
		ResumeStreams: true,                   // a failure after it resumes after the last token
	}
	// The hook runs on the stream's forwarding goroutine while the consumer
	// prints: what it saw is printed once the stream has ended.
	var mu sync.Mutex
	var breaks []string
	r, err := retry.New(llm, cfg, append(opts, retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) {
		mu.Lock()
		defer mu.Unlock()
		breaks = append(breaks, fmt.Sprintf("attempt %d broke: %v; resumed after %v",
			ev.Attempt, ev.Err, ev.Delay.Round(time.Millisecond)))
	}))...)
	if err != nil {
		return err
	}
	ch, err := r.Stream(context.Background(), "why resume?", core.WithOperation("llm.stream"))
	if err != nil {
		return err
	}
	fmt.Fprint(w, "stream \"why resume?\"\n  ")
	tokens := 0
	for v := range ch {
		if err, ok := v.(error); ok {
			fmt.Fprintf(w, "\n  stream failed: %v", err)
			continue
		}
		tokens++
		fmt.Fprint(w, v)
	}
	fmt.Fprintln(w)
	mu.Lock()
	for _, b := range breaks {
		fmt.Fprintf(w, "  [%s]\n", b)
	}
	mu.Unlock()
	fmt.Fprintf(w, "\nsummary: %d of %d tokens delivered once each, over %d streams (1 opened, %d resumed)\n",
		tokens, len(answer), llm.opens, llm.opens-1)
	return nil
}

// send delivers v on ch unless ctx ends first: a producer never blocks on
// a consumer that has gone.
func send(ctx context.Context, ch chan<- any, v any) bool {
	select {
	case ch <- v:
		return true
	case <-ctx.Done():
		return false
	}
}

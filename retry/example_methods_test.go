package retry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// badRequest is a 400: the request is wrong, no retry fixes it.
type badRequest struct{}

func (badRequest) Error() string   { return "bad request" }
func (badRequest) StatusCode() int { return 400 }

// Only the failed items are sent again, and only those whose errors are
// worth a retry; the outputs stay aligned with the inputs.
func ExampleRetryRunnable_Batch() {
	sent := map[string]int{}
	retriever := core.RunnableFunc(func(_ context.Context, in any, _ ...core.Option) (any, error) {
		q := in.(string)
		sent[q]++ // safe: WithMaxConcurrency(1) below runs the items one at a time
		switch {
		case q == "bad":
			return nil, badRequest{}
		case q == "flaky" && sent[q] == 1:
			return nil, unavailable{}
		}
		return "docs about " + q, nil
	})
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond}
	r := retry.NewRetryRunnable(retriever, cfg)

	outs, err := r.Batch(context.Background(), []any{"ok", "flaky", "bad"}, core.WithMaxConcurrency(1))
	fmt.Printf("%q\n", outs)
	var be *core.BatchError
	if errors.As(err, &be) {
		re := be.Errs[2].(*retry.Error)
		fmt.Println("item 2:", re.Outcome, "after", re.Attempts, "attempt")
	}
	fmt.Println("sent:", sent["ok"], sent["flaky"], sent["bad"])
	// Output:
	// ["docs about ok" "docs about flaky" <nil>]
	// item 2: not_retryable after 1 attempt
	// sent: 1 2 1
}

// flakyStream fails its first stream before the first chunk, as a
// provider that drops the connection early does.
type flakyStream struct {
	core.RunnableFunc
	calls int
}

func (f *flakyStream) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	f.calls++
	ch := make(chan any, 3)
	if f.calls == 1 {
		ch <- unavailable{} // an error value before any chunk: retried
	} else {
		ch <- "Hello"
		ch <- ", world"
	}
	close(ch)
	return ch, nil
}

// A stream is retried until its first chunk reaches the consumer, and
// never after: no chunk is ever delivered twice.
func ExampleRetryRunnable_Stream() {
	llm := &flakyStream{}
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond}
	r := retry.NewRetryRunnable(llm, cfg)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // a consumer that stops early must cancel
	ch, err := r.Stream(ctx, "Say hello")
	if err != nil {
		panic(err)
	}
	for chunk := range ch {
		if err, ok := chunk.(error); ok {
			fmt.Println("failed:", err)
			break
		}
		fmt.Print(chunk)
	}
	fmt.Println()
	fmt.Println("streams opened:", llm.calls)
	// Output:
	// Hello, world
	// streams opened: 2
}

// A model asked for JSON that first answers prose: CheckOutput rejects the
// answer, and NextInput tells the model what was wrong for the next
// attempt. A truncated or filtered answer would be retry.Permanent (the
// providers' CheckAnswer says so) and stop at once.
func ExampleRetryConfig_checkOutput() {
	model := core.RunnableFunc(func(_ context.Context, in any, _ ...core.Option) (any, error) {
		if !strings.Contains(in.(string), "not valid JSON") {
			return "Sure! The capital is Paris.", nil
		}
		return `{"capital": "Paris"}`, nil
	})
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond}
	var answer struct{ Capital string }
	cfg.CheckOutput = func(_ context.Context, _, out any) error {
		return json.Unmarshal([]byte(out.(string)), &answer)
	}
	cfg.NextInput = func(_ context.Context, in any, err error) any {
		return fmt.Sprintf("%s\nYour last answer was not valid JSON (%v). Answer with JSON only.", in, errors.Unwrap(err))
	}
	r := retry.NewRetryRunnable(model, cfg)
	_, err := r.Invoke(context.Background(), `Capital of France? Answer as {"capital": ...}.`)
	fmt.Println(answer.Capital, err)
	// Output: Paris <nil>
}

// gpt is a model that knows its GenAI call attributes.
type gpt struct{ core.RunnableFunc }

func (gpt) CallAttributes() []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String("gen_ai.request.model", "gpt-5")}
}

// A model's call attributes are on the call span of every call to it,
// through every decorator that wraps one Runnable (retry, breaker,
// ratelimit, hedge): they Unwrap to it.
func ExampleRetryRunnable_callAttributes() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	model := gpt{core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })}
	r := retry.NewRetryRunnable(model, retry.RetryConfig{}, retry.WithTracerProvider(tp))
	_, _ = r.Invoke(context.Background(), "q")
	spans := rec.Ended()
	call := spans[len(spans)-1] // retry.invoke ends after its attempts
	for _, kv := range call.Attributes() {
		if kv.Key == "gen_ai.request.model" {
			fmt.Println(kv.Key, kv.Value.String())
		}
	}
	// Output: gen_ai.request.model gpt-5
}

// numbers streams the ints from 1 to 5; its first stream's connection
// drops after 2, and Resume continues after any number it gave.
type numbers struct {
	core.RunnableFunc
	opened int
}

func (n *numbers) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	return n.from(ctx, 1), nil
}

func (n *numbers) Resume(ctx context.Context, _ any, last any, _ ...core.Option) (<-chan any, error) {
	return n.from(ctx, last.(int)+1), nil
}

// CanResume reports true: every stream of it resumes.
func (n *numbers) CanResume(context.Context) bool { return true }

func (n *numbers) from(ctx context.Context, start int) <-chan any {
	n.opened++
	first := n.opened == 1
	ch := make(chan any)
	go func() {
		defer close(ch)
		for i := start; i <= 5; i++ {
			if first && i == 3 {
				send(ctx, ch, io.ErrUnexpectedEOF) // the connection dropped
				return
			}
			if !send(ctx, ch, i) {
				return
			}
		}
	}()
	return ch
}

// With ResumeStreams, a stream that breaks after its first chunk is
// resumed after the last chunk delivered: nothing repeated, nothing lost.
func ExampleRetryConfig_resumeStreams() {
	cfg := retry.RetryConfig{MaxRetries: 3, ChunkTimeout: 30 * time.Second, ResumeStreams: true}
	r := retry.NewRetryRunnable(&numbers{}, cfg)
	ch, _ := r.Stream(context.Background(), "count")
	for v := range ch {
		fmt.Print(v, " ")
	}
	fmt.Println()
	// Output: 1 2 3 4 5
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

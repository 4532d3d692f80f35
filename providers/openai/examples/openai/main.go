// Command openai makes a chat call through a RetryRunnable over the real
// openai-go client and prints the trace as a tree, then streams a
// Responses API answer whose connection breaks mid-stream and is resumed
// from the last event delivered. By default it talks to a local fake
// server that misbehaves on purpose (a 429 with retry-after-ms, then a
// 503; a stream cut after two tokens), so it runs anywhere; -base-url and
// OPENAI_API_KEY point it at the real service.
//
//	go run ./examples/openai
//	OPENAI_API_KEY=sk-... go run ./examples/openai -base-url https://api.openai.com/v1/
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

func main() {
	baseURL := flag.String("base-url", "", "the API's base URL; empty starts a local fake server that misbehaves on purpose")
	model := flag.String("model", "gpt-4o-mini", "the model")
	prompt := flag.String("prompt", "Say hello in five words.", "the user message")
	flag.Parse()
	if err := run(os.Stdout, *baseURL, *model, *prompt); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(w io.Writer, baseURL, model, prompt string) error {
	key := os.Getenv("OPENAI_API_KEY")
	if baseURL == "" {
		srv := httptest.NewServer(misbehaving())
		defer srv.Close()
		baseURL, key = srv.URL+"/v1/", "fake-key"
		fmt.Fprintf(w, "talking to a local fake server at %s\n\n", srv.URL)
	}
	if key == "" {
		return fmt.Errorf("set OPENAI_API_KEY to call %s", baseURL)
	}

	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	defer tp.Shutdown(context.Background())

	chat := openai.NewChat(model, option.WithBaseURL(baseURL), option.WithAPIKey(key))
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second, Jitter: 0.2}
	r, err := retry.New(chat, cfg, retry.WithTracerProvider(tp),
		retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) {
			fmt.Fprintf(w, "attempt %d failed: %v; retrying in %v\n", ev.Attempt, ev.Err, ev.Delay.Round(time.Millisecond))
		}))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := r.Invoke(ctx, prompt, core.WithOperation("llm.chat"))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "answer: %v\n\ntrace:\n", openai.Text(out))
	printTrace(w, recorder.Ended())
	return streamResponse(ctx, w, baseURL, key, model, prompt)
}

// streamResponse streams an answer of the Responses API as a background
// response, resumed where its connection breaks.
func streamResponse(ctx context.Context, w io.Writer, baseURL, key, model, prompt string) error {
	resp := openai.NewResponses(model, option.WithBaseURL(baseURL), option.WithAPIKey(key), openai.WithResumableStreams())
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second,
		ResumeStreams: true, ChunkTimeout: 10 * time.Second}
	r, err := retry.New(resp, cfg, retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) {
		fmt.Fprintf(w, "  [stream broke: %v; resuming in %v]\n", ev.Err, ev.Delay.Round(time.Millisecond))
	}))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nresponses stream:\n")
	ch, err := r.Stream(ctx, prompt, core.WithOperation("llm.responses"))
	if err != nil {
		return err
	}
	var text strings.Builder
	events := 0
	for v := range ch {
		if err, ok := v.(error); ok {
			return err
		}
		ev := v.(responses.ResponseStreamEventUnion)
		if ev.SequenceNumber != int64(events) {
			return fmt.Errorf("event %d has sequence number %d: one was repeated or lost", events, ev.SequenceNumber)
		}
		events++
		if ev.Type == "response.output_text.delta" {
			text.WriteString(ev.Delta)
		}
	}
	fmt.Fprintf(w, "  answer: %s (%d events, in order, none twice)\n", text.String(), events)
	return nil
}

// printTrace prints the call span, its backoff events and its attempt
// spans beneath it, each with its duration, status and attributes.
func printTrace(w io.Writer, spans []sdktrace.ReadOnlySpan) {
	slices.SortFunc(spans, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	for _, s := range spans {
		indent := "  "
		if s.Name() == "retry.invoke" {
			indent = ""
		}
		took := s.EndTime().Sub(s.StartTime()).Round(time.Millisecond)
		fmt.Fprintf(w, "%s%s %v status=%s [%s]\n", indent, s.Name(), took, s.Status().Code, attrs(s.Attributes()))
		for _, ev := range s.Events() {
			fmt.Fprintf(w, "%s  event %s [%s]\n", indent, ev.Name, attrs(ev.Attributes))
		}
	}
}

func attrs(kvs []attribute.KeyValue) string {
	parts := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		parts = append(parts, fmt.Sprintf("%s=%s", kv.Key, kv.Value.String()))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// misbehaving answers the first chat request with a rate limit (retry
// after 200ms), the second with a 503, and then with a completion; its
// Responses stream breaks after two tokens, and resumes after the
// sequence number asked.
func misbehaving() http.Handler {
	var n atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/responses") {
			serveResponses(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch n.Add(1) {
		case 1:
			w.Header().Set("retry-after-ms", "200")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
		case 2:
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}`)
		default:
			fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini",
				"choices":[{"index":0,"message":{"role":"assistant","content":"Hello from the fake server!"},"finish_reason":"stop"}]}`)
		}
	})
}

// responseEvents is the fake server's one Responses answer.
var responseEvents = func() []string {
	var evs []string
	add := func(typ, fields string) {
		evs = append(evs, fmt.Sprintf(`{"type":%q,"sequence_number":%d,%s}`, typ, len(evs), fields))
	}
	resp := func(status string) string {
		return fmt.Sprintf(`"response":{"id":"resp_1","object":"response","status":%q,"model":"gpt-4o-mini","output":[]}`, status)
	}
	add("response.created", resp("in_progress"))
	add("response.in_progress", resp("in_progress"))
	for _, tok := range []string{"Hello", " from", " a", " resumed", " stream!"} {
		add("response.output_text.delta", fmt.Sprintf(`"item_id":"m1","output_index":0,"content_index":0,"delta":%q`, tok))
	}
	add("response.completed", resp("completed"))
	return evs
}()

// serveResponses streams responseEvents: a new response breaks its
// connection after two tokens; a resumed one (GET with starting_after)
// sends the events after the one asked.
func serveResponses(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	from, upTo := 0, 4 // the created and in_progress events, then two tokens
	if r.Method == http.MethodGet {
		fmt.Sscan(r.URL.Query().Get("starting_after"), &from)
		from, upTo = from+1, len(responseEvents)
	}
	for _, ev := range responseEvents[from:upTo] {
		fmt.Fprintf(w, "data: %s\n\n", ev)
	}
	w.(http.Flusher).Flush()
	if upTo < len(responseEvents) {
		panic(http.ErrAbortHandler) // the connection breaks
	}
}

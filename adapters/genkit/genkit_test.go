package genkit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/firebase/genkit/go/ai"
	gstatus "github.com/firebase/genkit/go/core/status"
	gk "github.com/firebase/genkit/go/genkit"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/adapters/genkit"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// g is the tests' Genkit, made outside any synctest bubble: Init listens
// for signals (signal.NotifyContext), a goroutine no bubble can wait out.
var g *gk.Genkit

func TestMain(m *testing.M) {
	ctx, cancel := context.WithCancel(context.Background())
	g = gk.Init(ctx)
	code := m.Run()
	cancel()
	if code == 0 {
		// os/signal's loop, started by Init, lives as long as the process.
		if err := goleak.Find(goleak.IgnoreTopFunction("os/signal.signal_recv")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// models counts the models the tests define, each under a name of its own.
var models atomic.Int64

// flaky is a model plugin's function of the test's own: it fails with the
// next of its errors, else streams its answer in words.
type flaky struct {
	mu    sync.Mutex
	fails []error
	calls int
}

func (f *flaky) generate(ctx context.Context, _ *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	f.mu.Lock()
	f.calls++
	var err error
	if len(f.fails) > 0 {
		err, f.fails = f.fails[0], f.fails[1:]
	}
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	words := []string{"Hello", " from", " Genkit"}
	if cb != nil {
		for _, w := range words {
			if err := cb(ctx, &ai.ModelResponseChunk{Content: []*ai.Part{ai.NewTextPart(w)}}); err != nil {
				return nil, err
			}
		}
	}
	return &ai.ModelResponse{Message: ai.NewModelTextMessage(strings.Join(words, "")), FinishReason: ai.FinishReasonStop,
		Usage: &ai.GenerationUsage{InputTokens: 7, OutputTokens: 3}}, nil
}

func (f *flaky) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

var cfg = retry.RetryConfig{MaxRetries: 3, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 10 * time.Second}

// generate runs a streaming Generate on f's model, every model call
// through steadfast's retry layer, and returns the answer, the chunks the
// caller's callback received, and the time it took.
func generate(t *testing.T, f *flaky) (string, []string, time.Duration, error) {
	t.Helper()
	ctx := t.Context()
	name := fmt.Sprintf("test/flaky-%d", models.Add(1))
	m := gk.DefineModelAction(g, name, &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true}}, modelAction(f.generate))
	var chunks []string
	start := time.Now()
	resp, err := gk.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("Say hello"),
		ai.WithUse(genkit.Middleware(retry.Middleware(cfg))),
		ai.WithStreaming(func(_ context.Context, c *ai.ModelResponseChunk) error {
			chunks = append(chunks, c.Text())
			return nil
		}))
	if err != nil {
		return "", chunks, time.Since(start), err
	}
	return resp.Text(), chunks, time.Since(start), nil
}

// A model that answers 429 with a Retry-After of 2 s, then streams its
// answer: one answer, each chunk once, after exactly the server's wait.
func TestGenerateRetriesARateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &flaky{fails: []error{&llmhttp.APIError{Status: 429, Code: "rate_limit_exceeded", After: 2 * time.Second, Err: errors.New("429 Too Many Requests")}}}
		text, chunks, took, err := generate(t, f)
		if err != nil || text != "Hello from Genkit" {
			t.Fatalf("Generate() = %q, %v; want the answer", text, err)
		}
		if strings.Join(chunks, "") != "Hello from Genkit" {
			t.Errorf("chunks %q; want each once", chunks)
		}
		if took != 2*time.Second || f.count() != 2 {
			t.Errorf("%d model calls in %v; want 2, after the server's 2s", f.count(), took)
		}
	})
}

// The model's usage and finish reason reach the attempt span, streamed or
// not, as the providers' adapters put them there.
func TestUsageReachesTheAttemptSpan(t *testing.T) {
	m := gk.DefineModelAction(g, fmt.Sprintf("test/flaky-%d", models.Add(1)), &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true}}, modelAction((&flaky{}).generate))
	for _, stream := range []bool{false, true} {
		rec := tracetest.NewSpanRecorder()
		r, err := retry.New(genkit.FromModel(m), cfg, retry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
		if err != nil {
			t.Fatal(err)
		}
		req := &ai.ModelRequest{Messages: []*ai.Message{ai.NewUserTextMessage("Say hello")}}
		if stream {
			ch, err := r.Stream(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			for range ch {
			}
		} else if _, err := r.Invoke(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, s := range rec.Ended() {
			if s.Name() == "retry.attempt" {
				for _, kv := range s.Attributes() {
					got[string(kv.Key)] = kv.Value.String()
				}
			}
		}
		want := map[string]string{"gen_ai.usage.input_tokens": "7", "gen_ai.usage.output_tokens": "3", "gen_ai.response.finish_reasons": `["stop"]`}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("stream %v: attempt span %s = %q, want %q", stream, k, got[k], v)
			}
		}
	}
}

// Genkit's own statuses are read as HTTP statuses: UNAVAILABLE is
// retried; UNAUTHENTICATED is one call.
func TestGenkitStatusesFollowTheRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &flaky{fails: []error{gkError("UNAVAILABLE")}}
		if text, _, _, err := generate(t, f); err != nil || text != "Hello from Genkit" || f.count() != 2 {
			t.Errorf("UNAVAILABLE then an answer: %q, %v after %d calls; want the answer after 2", text, err, f.count())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		f := &flaky{fails: []error{gkError("UNAUTHENTICATED")}}
		_, chunks, _, err := generate(t, f)
		var re *retry.Error
		if !errors.As(err, &re) || re.Outcome != retry.OutcomeNotRetryable || f.count() != 1 || len(chunks) != 0 {
			t.Errorf("UNAUTHENTICATED: %v after %d calls, chunks %q; want not_retryable after 1, none", err, f.count(), chunks)
		}
	})
}

// gkError is a Genkit error of status.
func gkError(status string) error {
	return gstatus.Errorf(gstatus.Base(gstatus.Name(status)), "the model says %s", status)
}

// modelAction is fn as the function of a model action, whose typed config
// it does not read.
func modelAction(fn func(context.Context, *ai.ModelRequest, ai.ModelStreamCallback) (*ai.ModelResponse, error)) ai.ModelActionFunc[map[string]any] {
	return func(ctx context.Context, req *ai.ModelRequest, _ map[string]any, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		return fn(ctx, req, cb)
	}
}

// A stream that breaks after its first chunks, under a retry layer with
// RestartStreams, is started again: the callback's first chunk of the new
// answer is marked Aggregated, Genkit's word for a chunk that replaces
// what came before, and Generate returns the new answer.
func TestARestartReachesTheCallbackAsAnAggregatedChunk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		breaksOnce := func(ctx context.Context, _ *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			words := []string{"Hello", " from", " Genkit"}
			first := calls.Add(1) == 1
			for i, w := range words {
				if first && i == 2 {
					return nil, &llmhttp.APIError{Status: 503, Err: errors.New("503 connection reset mid-answer")}
				}
				if err := cb(ctx, &ai.ModelResponseChunk{Content: []*ai.Part{ai.NewTextPart(w)}}); err != nil {
					return nil, err
				}
			}
			return &ai.ModelResponse{Message: ai.NewModelTextMessage(strings.Join(words, "")), FinishReason: ai.FinishReasonStop}, nil
		}
		m := gk.DefineModelAction(g, fmt.Sprintf("test/breaking-%d", models.Add(1)),
			&ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true}}, modelAction(breaksOnce))
		restarting := cfg
		restarting.RestartStreams = true
		var chunks []string
		resp, err := gk.Generate(t.Context(), g, ai.WithModel(m), ai.WithPrompt("Say hello"),
			ai.WithUse(genkit.Middleware(retry.Middleware(restarting))),
			ai.WithStreaming(func(_ context.Context, c *ai.ModelResponseChunk) error {
				text := c.Text()
				if c.Aggregated {
					text = "[replace]" + text
				}
				chunks = append(chunks, text)
				return nil
			}))
		if err != nil || resp.Text() != "Hello from Genkit" || calls.Load() != 2 {
			t.Fatalf("Generate() = %v, %v after %d model calls; want the answer after 2", resp, err, calls.Load())
		}
		if want := []string{"Hello", " from", "[replace]Hello", " from", " Genkit"}; !slices.Equal(chunks, want) {
			t.Errorf("the callback got %q, want %q", chunks, want)
		}
	})
}

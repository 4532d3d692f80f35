package langchaingo_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/fake"
	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/adapters/langchaingo"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// overloaded is a provider's 503, as an adapter would make it.
type overloaded struct{}

func (overloaded) Error() string   { return "503 overloaded" }
func (overloaded) StatusCode() int { return 503 }

// turn is one scripted answer: chunks streamed, then err or the response.
type turn struct {
	chunks []string
	err    error
	res    *llms.ContentResponse
}

// scripted is an llms.Model that answers with its turns in order and
// records the options of each call.
type scripted struct {
	mu    sync.Mutex
	turns []turn
	calls int
	temps []float64
}

func (s *scripted) GenerateContent(ctx context.Context, _ []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var co llms.CallOptions
	for _, o := range options {
		o(&co)
	}
	s.mu.Lock()
	t := s.turns[min(s.calls, len(s.turns)-1)]
	s.calls++
	s.temps = append(s.temps, co.Temperature)
	s.mu.Unlock()
	for _, c := range t.chunks {
		if co.StreamingFunc != nil {
			if err := co.StreamingFunc(ctx, []byte(c)); err != nil {
				return nil, err
			}
		}
	}
	if t.err != nil {
		return nil, t.err
	}
	return t.res, nil
}

func (s *scripted) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, s, prompt, options...)
}

// withTool is a response with a tool call and usage.
func withTool(text string) *llms.ContentResponse {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
		Content: text, StopReason: "tool_calls",
		ToolCalls:      []llms.ToolCall{{ID: "call_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "search", Arguments: `{"q":"go"}`}}},
		GenerationInfo: map[string]any{"PromptTokens": 12, "CompletionTokens": 5},
	}}}
}

// retried wraps m: FromModel, then retry with 1s backoffs, then ToModel.
func retried(t *testing.T, m llms.Model) *langchaingo.RunnableModel {
	t.Helper()
	return retriedWith(t, m, retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Second})
}

// retriedWith wraps m: FromModel, then retry under cfg, then ToModel.
func retriedWith(t *testing.T, m llms.Model, cfg retry.RetryConfig) *langchaingo.RunnableModel {
	t.Helper()
	r, err := langchaingo.FromModel(m)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := retry.New(r, cfg,
		retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	lm, err := langchaingo.ToModel(rr)
	if err != nil {
		t.Fatal(err)
	}
	return lm
}

// framework → Runnable → framework: the fake model's answer comes back.
func TestRoundTripWithTheFrameworksFake(t *testing.T) {
	lm := retried(t, fake.NewFakeLLM([]string{"Hello from the fake"}))
	out, err := lm.Call(t.Context(), "hi")
	if err != nil || out != "Hello from the fake" {
		t.Errorf("Call() = %q, %v, want the fake's answer", out, err)
	}
}

// A failure is retried; tool calls, usage and call options survive the
// round trip.
func TestRoundTripKeepsToolCallsUsageAndOptions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &scripted{turns: []turn{{err: overloaded{}}, {res: withTool("")}}}
		res, err := retried(t, m).GenerateContent(t.Context(),
			[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "find go")}, llms.WithTemperature(0.3))
		if err != nil {
			t.Fatal(err)
		}
		c := res.Choices[0]
		if len(c.ToolCalls) != 1 || c.ToolCalls[0].FunctionCall.Name != "search" || c.GenerationInfo["PromptTokens"] != 12 {
			t.Errorf("choice = %+v, want the tool call and the usage", c)
		}
		if m.calls != 2 || !slices.Equal(m.temps, []float64{0.3, 0.3}) {
			t.Errorf("calls = %d with temperatures %v, want 2 at 0.3", m.calls, m.temps)
		}
	})
}

// The streaming function sees only the committed attempt's chunks: the
// first attempt failed after an empty chunk, which was held back.
func TestStreamingFuncSeesOnlyTheCommittedAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &scripted{turns: []turn{
			{chunks: []string{""}, err: overloaded{}},
			{chunks: []string{"Hel", "lo"}, res: withTool("Hello")},
		}}
		var seen []string
		res, err := retried(t, m).GenerateContent(t.Context(), nil, llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
			seen = append(seen, string(c))
			return nil
		}))
		if err != nil || !slices.Equal(seen, []string{"Hel", "lo"}) || m.calls != 2 {
			t.Fatalf("GenerateContent() = %v, saw %q after %d calls, want Hel, lo after 2", err, seen, m.calls)
		}
		if len(res.Choices[0].ToolCalls) != 1 || res.Choices[0].GenerationInfo["CompletionTokens"] != 5 {
			t.Errorf("streamed response = %+v, want the final response with its tool call and usage", res.Choices[0])
		}
	})
}

// After the first chunk nothing is retried: the failure is the call's.
func TestStreamFailsAfterTheFirstChunk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &scripted{turns: []turn{{chunks: []string{"Hel"}, err: overloaded{}}, {chunks: []string{"never"}}}}
		var seen []string
		_, err := retried(t, m).GenerateContent(t.Context(), nil, llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
			seen = append(seen, string(c))
			return nil
		}))
		if !errors.As(err, new(overloaded)) || !slices.Equal(seen, []string{"Hel"}) || m.calls != 1 {
			t.Errorf("error = %v, saw %q after %d calls, want the 503 after Hel and 1 call", err, seen, m.calls)
		}
	})
}

// A streaming function that fails stops the stream; nothing is left
// running.
func TestStreamingFuncErrorStopsTheStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &scripted{turns: []turn{{chunks: []string{"a", "b", "c"}, res: withTool("abc")}}}
		stop := errors.New("enough")
		_, err := retried(t, m).GenerateContent(t.Context(), nil, llms.WithStreamingFunc(func(context.Context, []byte) error { return stop }))
		if !errors.Is(err, stop) {
			t.Errorf("error = %v, want the streaming function's", err)
		}
		synctest.Wait()
	})
}

func TestBadInputAndNil(t *testing.T) {
	r, err := langchaingo.FromModel(fake.NewFakeLLM([]string{"x"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(t.Context(), 42); err == nil {
		t.Error("Invoke(42) error = nil")
	}
	if _, err := langchaingo.FromModel(nil); err == nil {
		t.Error("FromModel(nil) error = nil")
	}
	if _, err := langchaingo.ToModel(nil); err == nil {
		t.Error("ToModel(nil) error = nil")
	}
	var _ core.Runnable = r
}

// The model's errors reach the error adapter, so classification works
// through the adapter.
func TestErrorAdapterClassifies(t *testing.T) {
	quota := errors.New("429 insufficient_quota")
	m := &scripted{turns: []turn{{err: quota}, {res: withTool("never")}}}
	r, err := langchaingo.FromModel(m, langchaingo.WithErrorAdapter(func(err error) error {
		if errors.Is(err, quota) {
			return retry.Permanent(err)
		}
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	rr, err := retry.New(r, retry.DefaultRetryConfig(), retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = rr.Invoke(t.Context(), "q")
	if re, ok := errors.AsType[*retry.Error](err); !ok || re.Outcome != retry.OutcomeNotRetryable || m.calls != 1 {
		t.Errorf("Invoke() error = %v after %d calls, want not_retryable after 1", err, m.calls)
	}
}

// A stream that breaks after its first chunk, under a retry layer with
// RestartStreams, is started again: GenerateContent returns the restarted
// answer, and the streaming function is only ever given text that extends
// what it has into that answer.
func TestARestartedStreamReturnsTheWholeAnswer(t *testing.T) {
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Second, RestartStreams: true}
	for _, tc := range []struct {
		name   string
		again  []string
		answer string
		seen   []string
	}{
		{"the same answer again", []string{"Hel", "lo wor", "ld"}, "Hello world", []string{"Hel", "lo wor", "ld"}},
		{"a longer first chunk", []string{"Hello w", "orld"}, "Hello world", []string{"Hel", "lo wor", "ld"}},
		{"another answer", []string{"Good", "bye"}, "Goodbye", []string{"Hel", "lo wor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := &scripted{turns: []turn{
					{chunks: []string{"Hel", "lo wor"}, err: overloaded{}},
					{chunks: tc.again, res: &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: tc.answer}}}},
				}}
				var seen []string
				res, err := retriedWith(t, m, cfg).GenerateContent(t.Context(), nil, llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
					seen = append(seen, string(c))
					return nil
				}))
				if err != nil || res.Choices[0].Content != tc.answer || m.calls != 2 {
					t.Fatalf("GenerateContent() = %v, %v after %d calls, want %q after 2", res, err, m.calls, tc.answer)
				}
				if !slices.Equal(seen, tc.seen) {
					t.Errorf("the streaming function saw %q, want %q", seen, tc.seen)
				}
			})
		})
	}
}

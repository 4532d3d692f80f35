package adk_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/genai"

	"github.com/steadfast-go/steadfast/adapters/adk"
	"github.com/steadfast-go/steadfast/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scripted is an ADK model that fails with the next of its errors, then
// answers text, streamed in two parts when asked to stream.
type scripted struct {
	mu    sync.Mutex
	fails []error
	calls int
	text  string
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) GenerateContent(ctx context.Context, _ *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		s.mu.Lock()
		s.calls++
		var err error
		if len(s.fails) > 0 {
			err, s.fails = s.fails[0], s.fails[1:]
		}
		s.mu.Unlock()
		if err != nil {
			yield(nil, err)
			return
		}
		if stream {
			half := len(s.text) / 2
			for _, part := range []string{s.text[:half], s.text[half:]} {
				if !yield(&model.LLMResponse{Content: genai.NewContentFromText(part, genai.RoleModel), Partial: true}, nil) {
					return
				}
			}
		}
		yield(&model.LLMResponse{Content: genai.NewContentFromText(s.text, genai.RoleModel), TurnComplete: true, FinishReason: genai.FinishReasonStop,
			ModelVersion: "scripted-001", UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 12, CandidatesTokenCount: 3}}, nil)
	}
}

func (s *scripted) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

var cfg = retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: 10 * time.Second}

// run runs an llmagent on m through steadfast's retry layer and ADK's
// runner, and returns the text of the agent's final event.
func run(t *testing.T, m model.LLM, mode agent.StreamingMode) (string, error) {
	t.Helper()
	chain, err := retry.New(adk.FromLLM(m), cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := llmagent.New(llmagent.Config{Name: "helper", Description: "answers", Model: adk.ToLLM(chain, "scripted")})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.NewInMemory("app", a)
	if err != nil {
		t.Fatal(err)
	}
	var final string
	for ev, err := range r.Run(t.Context(), "user", "session", genai.NewContentFromText("Say hello", genai.RoleUser), agent.RunConfig{StreamingMode: mode}) {
		if err != nil {
			return "", err
		}
		if ev.IsFinalResponse() && ev.Content != nil {
			var b strings.Builder
			for _, p := range ev.Content.Parts {
				b.WriteString(p.Text)
			}
			final = b.String()
		}
	}
	return final, nil
}

// An llmagent whose model fails with a 503 and then answers, through the
// runner: the final event has the answer, after a backoff, in two model
// calls; with streaming, no part of the answer is doubled.
func TestAnAgentRetriesAnOverloadedModel(t *testing.T) {
	for _, mode := range []agent.StreamingMode{agent.StreamingModeNone, agent.StreamingModeSSE} {
		synctest.Test(t, func(t *testing.T) {
			m := &scripted{fails: []error{genai.APIError{Code: 503, Status: "UNAVAILABLE", Message: "The model is overloaded."}}, text: "Hello there"}
			start := time.Now()
			got, err := run(t, m, mode)
			if err != nil || got != "Hello there" {
				t.Fatalf("%s: final answer %q, %v; want Hello there", mode, got, err)
			}
			if m.count() != 2 || time.Since(start) < time.Second/2 {
				t.Errorf("%s: %d model calls after %v; want 2, after the backoff", mode, m.count(), time.Since(start))
			}
		})
	}
}

// The model's usage, finish reason and version reach the attempt span,
// streamed or not, as the providers' adapters put them there.
func TestUsageReachesTheAttemptSpan(t *testing.T) {
	for _, stream := range []bool{false, true} {
		rec := tracetest.NewSpanRecorder()
		r, err := retry.New(adk.FromLLM(&scripted{text: "Hello there"}), cfg,
			retry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
		if err != nil {
			t.Fatal(err)
		}
		req := &model.LLMRequest{Contents: []*genai.Content{genai.NewContentFromText("Say hello", genai.RoleUser)}}
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
			if s.Name() != "retry.attempt" {
				continue
			}
			for _, kv := range s.Attributes() {
				got[string(kv.Key)] = kv.Value.String()
			}
		}
		want := map[string]string{"gen_ai.usage.input_tokens": "12", "gen_ai.usage.output_tokens": "3",
			"gen_ai.response.finish_reasons": `["STOP"]`, "gen_ai.response.model": "scripted-001"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("stream %v: attempt span %s = %q, want %q", stream, k, got[k], v)
			}
		}
	}
}

// A 401 is one request: no retry fixes a key.
func TestAnAgentDoesNotRetryARejectedKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &scripted{fails: []error{genai.APIError{Code: 401, Status: "UNAUTHENTICATED", Message: "API key not valid."}}, text: "unreachable"}
		_, err := run(t, m, agent.StreamingModeNone)
		var re *retry.Error
		if !errors.As(err, &re) || re.Outcome != retry.OutcomeNotRetryable || m.count() != 1 {
			t.Errorf("error %v after %d model calls; want not_retryable after 1", err, m.count())
		}
	})
}

// ShouldRetry retries what the rules call transient, and nothing they call
// permanent.
func TestShouldRetry(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{genai.APIError{Code: 503, Status: "UNAVAILABLE"}, true},
		{genai.APIError{Code: 429, Status: "RESOURCE_EXHAUSTED"}, true},
		{genai.APIError{Code: 401, Status: "UNAUTHENTICATED"}, false},
		{genai.APIError{Code: 400, Status: "INVALID_ARGUMENT"}, false},
		{retry.Permanent(errors.New("bad input")), false},
		{context.Canceled, false},
	} {
		if got := adk.ShouldRetry(tc.err); got != tc.want {
			t.Errorf("ShouldRetry(%v) = %v; want %v", tc.err, got, tc.want)
		}
	}
}

// A consumer that stops reading the streamed responses early stops the
// stream: nothing outlives the call (goleak checks).
func TestToLLMStopsTheStreamWhenTheCallerStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &scripted{text: "Hello there"}
		chain, err := retry.New(adk.FromLLM(m), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for resp, err := range adk.ToLLM(chain, "scripted").GenerateContent(t.Context(), &model.LLMRequest{}, true) {
			if err != nil || resp == nil {
				t.Fatalf("first response %v, %v", resp, err)
			}
			break
		}
		synctest.Wait()
	})
}

// cutOnce is an ADK model whose first stream breaks after its first
// partial response; it then answers as scripted does.
type cutOnce struct {
	scripted
	cut bool
}

func (c *cutOnce) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	c.mu.Lock()
	first := !c.cut
	c.cut = true
	c.mu.Unlock()
	if !first || !stream {
		return c.scripted.GenerateContent(ctx, req, stream)
	}
	return func(yield func(*model.LLMResponse, error) bool) {
		if yield(&model.LLMResponse{Content: genai.NewContentFromText("Hel", genai.RoleModel), Partial: true}, nil) {
			yield(nil, genai.APIError{Code: 503, Status: "UNAVAILABLE", Message: "connection reset mid-answer"})
		}
	}
}

// A stream that breaks after its first partial response, under a retry
// layer with RestartStreams, is started again: GenerateContent yields an
// Interrupted partial response between the voided and the new ones, and
// the agent's final event is the new answer, whole.
func TestARestartIsAnInterruptedPartialResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &cutOnce{scripted: scripted{text: "Hello there"}}
		restarting := cfg
		restarting.RestartStreams = true
		chain, err := retry.New(adk.FromLLM(m), restarting)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for resp, err := range adk.ToLLM(chain, "scripted").GenerateContent(t.Context(), &model.LLMRequest{}, true) {
			if err != nil {
				t.Fatalf("GenerateContent: %v after %q", err, got)
			}
			text := ""
			if resp.Content != nil {
				text = resp.Content.Parts[0].Text
			}
			if resp.Interrupted {
				text = "[interrupted]"
			}
			got = append(got, text)
		}
		if want := []string{"Hel", "[interrupted]", "Hello", " there", "Hello there"}; !slices.Equal(got, want) {
			t.Errorf("responses %q, want %q", got, want)
		}

		m = &cutOnce{scripted: scripted{text: "Hello there"}}
		a, err := llmagent.New(llmagent.Config{Name: "helper", Description: "answers", Model: adk.ToLLM(mustRetry(t, m, restarting), "scripted")})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runner.NewInMemory("app", a)
		if err != nil {
			t.Fatal(err)
		}
		var finals []string
		for ev, err := range r.Run(t.Context(), "user", "session", genai.NewContentFromText("Say hello", genai.RoleUser), agent.RunConfig{StreamingMode: agent.StreamingModeSSE}) {
			if err != nil {
				t.Fatalf("the runner: %v", err)
			}
			if ev.IsFinalResponse() && ev.Content != nil {
				finals = append(finals, ev.Content.Parts[0].Text)
			}
		}
		if !slices.Equal(finals, []string{"Hello there"}) {
			t.Errorf("the agent's final events %q, want the restarted answer once", finals)
		}
	})
}

func mustRetry(t *testing.T, m model.LLM, c retry.RetryConfig) *retry.RetryRunnable {
	t.Helper()
	r, err := retry.New(adk.FromLLM(m), c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

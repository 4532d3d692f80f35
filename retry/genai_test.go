package retry_test

import (
	"context"
	"iter"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// adapter is a provider adapter as the providers are written: a local
// gate (a second's wait, or a refusal) before the request leaves, then
// llmhttp.Inference, two seconds of request, and the response recorded.
type adapter struct {
	fails  []error // the answers of the first requests
	refuse bool    // refuse every call locally, before any request
	sent   int
}

// localRefusal is a limiter's or a breaker's refusal.
type localRefusal struct{}

func (localRefusal) Error() string   { return "refused locally" }
func (localRefusal) Local() bool     { return true }
func (localRefusal) Retryable() bool { return true }

var adapterAttrs = []attribute.KeyValue{
	semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String("openai"), semconv.GenAIRequestModelKey.String("m1"),
}

func (a *adapter) CallAttributes() []attribute.KeyValue { return adapterAttrs }

func (a *adapter) send(ctx context.Context) (context.Context, error) {
	time.Sleep(time.Second) // a limiter's wait: not the inference's
	if a.refuse {
		return ctx, localRefusal{}
	}
	ctx = llmhttp.Inference(ctx, a.CallAttributes()...)
	a.sent++
	if a.sent <= len(a.fails) {
		time.Sleep(2 * time.Second)
		return ctx, a.fails[a.sent-1]
	}
	return ctx, nil
}

func (a *adapter) Invoke(ctx context.Context, _ any, _ ...core.Option) (any, error) {
	ctx, err := a.send(ctx)
	if err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second)
	r := llmhttp.Response{Model: "m1-2026", FinishReasons: []string{"stop"}, HasUsage: true, InputTokens: 10, OutputTokens: 5}
	r.Record(ctx)
	return "ok", nil
}

func (a *adapter) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(a.Invoke).Batch(ctx, in, opts...)
}

// Stream answers three chunks, 0.5 s to the first and 0.25 s apart; with
// cut set, the third is a failure instead.
func (a *adapter) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	ctx, err := a.send(ctx)
	if err != nil {
		return nil, err
	}
	cut := a.sent == 1 && len(a.fails) == 0
	seq := iter.Seq2[string, error](func(yield func(string, error) bool) {
		for i, c := range []string{"a", "b", "c"} {
			time.Sleep(map[bool]time.Duration{true: 500 * time.Millisecond, false: 250 * time.Millisecond}[i == 0])
			if cut && i == 2 {
				yield("", &mock.HTTPError{Code: 503})
				return
			}
			if !yield(c, nil) {
				return
			}
		}
	})
	var r llmhttp.Response
	return llmhttp.PumpSeq(ctx, seq, llmhttp.PumpConfig[string]{
		Content: func(string) bool { return true },
		Adapt:   func(err error) error { return err },
		Observe: func(c string) {
			if c == "c" {
				r.HasUsage, r.InputTokens, r.OutputTokens, r.FinishReasons = true, 7, 3, []string{"stop"}
			}
		},
		Done: func() { r.Record(ctx) },
	}), nil
}

// startSampler keeps the attributes each span had when it started.
type startSampler struct {
	mu    sync.Mutex
	start map[string][]attribute.KeyValue
	kinds map[string]trace.SpanKind
}

func (s *startSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start[p.Name] = p.Attributes
	s.kinds[p.Name] = p.Kind
	return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample}
}

func (s *startSampler) Description() string { return "startSampler" }

func genAIRecorder() (*recorder, *startSampler) {
	rec := newRecorder()
	s := &startSampler{start: map[string][]attribute.KeyValue{}, kinds: map[string]trace.SpanKind{}}
	rec.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec.spans), sdktrace.WithSampler(s))
	return rec, s
}

// In the GenAI conventions' mode, each request an attempt sends is a
// CLIENT span gen_ai.client.inference, "chat m1", under the attempt span,
// from the request to the answer (not the local wait before it), its
// sampling attributes set at its start, error.type on the failure and
// http.request.resend_count on the resend; the call span carries no
// gen_ai.*; the metrics count each inference, its usage (0 for the failed
// one) and, for the one that succeeded, its tokens per operation (#72).
func TestGenAIInferencePerAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, sampler := genAIRecorder()
		inner := &adapter{fails: []error{&mock.HTTPError{Code: 503}}}
		r := newRetry(t, inner, testConfig(), append(rec.options(), retry.WithGenAIConventions())...)
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		spans := rec.ended("chat m1")
		if len(spans) != 2 {
			t.Fatalf("inference spans = %d, want 2:\n%s", len(spans), rec.tree())
		}
		attempts := rec.ended("retry.attempt")
		for i, s := range spans {
			if s.SpanKind() != trace.SpanKindClient {
				t.Errorf("inference %d kind = %v, want client", i+1, s.SpanKind())
			}
			if s.Parent().SpanID() != attempts[i].SpanContext().SpanID() {
				t.Errorf("inference %d is not a child of attempt %d", i+1, i+1)
			}
			if d := s.EndTime().Sub(s.StartTime()); d != 2*time.Second {
				t.Errorf("inference %d took %v, want 2s (the request, not the local wait)", i+1, d)
			}
		}
		wantAttrs(t, "first inference", spans[0].Attributes(), map[string]string{"error.type": "503", "gen_ai.provider.name": "openai"}, "http.request.resend_count", "gen_ai.usage.input_tokens")
		wantAttrs(t, "second inference", spans[1].Attributes(), map[string]string{
			"http.request.resend_count": "1", "gen_ai.usage.input_tokens": "10", "gen_ai.response.model": "m1-2026",
		}, "error.type")
		wantAttrs(t, "the inference's start", sampler.start["chat m1"], map[string]string{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "m1",
		})
		for _, kv := range rec.one(t, "retry.invoke").Attributes() {
			if len(kv.Key) > 7 && kv.Key[:7] == "gen_ai." {
				t.Errorf("the call span carries %s: a backend would count the call as an inference", kv.Key)
			}
		}
		m := rec.points(t)
		base := "gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=m1"
		for name, want := range map[string]map[string]string{
			"gen_ai.client.inference.duration":                {base: "count=1 sum=2", "error.type=503," + base: "count=1 sum=2"},
			"gen_ai.client.inference.usage.input_tokens":      {base + ",gen_ai.token.modality=unknown": "10"},
			"gen_ai.client.inference.usage.output_tokens":     {base + ",gen_ai.token.modality=unknown": "5"},
			"gen_ai.client.inference.operation.input_tokens":  {base: "count=1 sum=10"},
			"gen_ai.client.inference.operation.output_tokens": {base: "count=1 sum=5"},
		} {
			if got := m[name]; !equalMaps(got, want) {
				t.Errorf("%s = %v, want %v", name, got, want)
			}
		}
		if got := m["gen_ai.client.inference.time_to_first_chunk"]; len(got) != 0 {
			t.Errorf("time_to_first_chunk = %v for an Invoke, want none", got)
		}
	})
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A stream's inference measures the time to its first chunk from the
// request and the time between chunks; one that broke says finish reason
// "error", and its restart is a second inference (#72).
func TestGenAIStreamInference(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, _ := genAIRecorder()
		cfg := streamConfig()
		cfg.RestartStreams = true
		r := newRetry(t, &adapter{}, cfg, append(rec.options(), retry.WithGenAIConventions())...)
		ch, err := r.Stream(t.Context(), "q", core.WithResets())
		if err != nil {
			t.Fatal(err)
		}
		for range ch {
		}
		spans := rec.ended("chat m1")
		if len(spans) != 2 {
			t.Fatalf("inference spans = %d, want 2 (the cut and the restart):\n%s", len(spans), rec.tree())
		}
		wantAttrs(t, "the cut stream", spans[0].Attributes(), map[string]string{
			"gen_ai.response.finish_reasons": `["error"]`, "gen_ai.request.stream": "true",
		})
		wantAttrs(t, "the restart", spans[1].Attributes(), map[string]string{
			"gen_ai.response.finish_reasons": `["stop"]`, "http.request.resend_count": "1",
		}, "error.type")
		m := rec.points(t)
		base := "gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=m1"
		if got := m["gen_ai.client.inference.time_to_first_chunk"][base]; got != "count=2 sum=1" {
			t.Errorf("time_to_first_chunk = %v, want two of 0.5 s", m["gen_ai.client.inference.time_to_first_chunk"])
		}
		if got := m["gen_ai.client.inference.time_per_output_chunk"][base]; got != "count=3 sum=0.75" {
			t.Errorf("time_per_output_chunk = %v, want 0.25 s for the cut's second chunk and the restart's two", m["gen_ai.client.inference.time_per_output_chunk"])
		}
	})
}

// A call the gate refuses locally never reaches the provider: its
// attempts are traced as ever, and nothing says gen_ai (#72).
func TestGenAILocalRefusalEmitsNoInference(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, _ := genAIRecorder()
		r := newRetry(t, &adapter{refuse: true}, testConfig(), append(rec.options(), retry.WithGenAIConventions())...)
		if _, err := r.Invoke(t.Context(), "q"); err == nil {
			t.Fatal("a refused call succeeded")
		}
		if n := len(rec.ended("retry.attempt")); n == 0 {
			t.Fatal("no attempt was traced")
		}
		for _, s := range rec.spans.Ended() {
			for _, kv := range s.Attributes() {
				if len(kv.Key) > 7 && kv.Key[:7] == "gen_ai." {
					t.Errorf("span %s carries %s", s.Name(), kv.Key)
				}
			}
		}
		for name := range rec.points(t) {
			if len(name) > 7 && name[:7] == "gen_ai." {
				t.Errorf("metric %s recorded for a call that never reached the provider", name)
			}
		}
	})
}

// The environment turns the mode on as the option does; without either,
// no inference span is made and the call span keeps the gen_ai.*
// attributes it always had (#72).
func TestGenAIModeFromTheEnvironment(t *testing.T) {
	for _, env := range []string{"", "http,gen_ai_latest_experimental"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv("OTEL_SEMCONV_STABILITY_OPT_IN", env)
			synctest.Test(t, func(t *testing.T) {
				rec, _ := genAIRecorder()
				r := newRetry(t, &adapter{}, testConfig(), rec.options()...)
				if _, err := r.Invoke(t.Context(), "q"); err != nil {
					t.Fatal(err)
				}
				on := env != ""
				if got := len(rec.ended("chat m1")); got != map[bool]int{true: 1, false: 0}[on] {
					t.Errorf("inference spans = %d with %q", got, env)
				}
				call := attrs(rec.one(t, "retry.invoke").Attributes())
				if _, has := call["gen_ai.provider.name"]; has == on {
					t.Errorf("call span's gen_ai.provider.name present = %v with %q", has, env)
				}
			})
		})
	}
}

// In a Batch each item's request is an inference of its own, ended with
// the item's own error (#72).
func TestGenAIBatchItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, _ := genAIRecorder()
		inner := &adapter{fails: []error{&mock.HTTPError{Code: 503}}}
		r := newRetry(t, inner, testConfig(), append(rec.options(), retry.WithGenAIConventions())...)
		if _, err := r.Batch(t.Context(), []any{"a", "b"}, core.WithMaxConcurrency(1)); err != nil {
			t.Fatal(err)
		}
		spans := rec.ended("chat m1")
		failed := 0
		for _, s := range spans {
			if attrs(s.Attributes())["error.type"] == "503" {
				failed++
			}
		}
		if len(spans) != 3 || failed != 1 {
			t.Errorf("inference spans = %d (%d failed), want 3: two items, one resent once:\n%s", len(spans), failed, rec.tree())
		}
	})
}

package openai_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/chaos"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// throughChaos is llm, made with a client whose Transport injects faults
// before srv, behind a retry layer; failed gets each failed attempt's
// error.
func throughChaos(t *testing.T, srv *llmhttptest.Server, cfg retry.RetryConfig, failed *[]error,
	llm func(opts ...option.RequestOption) core.Runnable, faults ...chaos.Fault) *retry.RetryRunnable {
	t.Helper()
	client := &http.Client{Transport: chaos.Transport(srv, faults...)}
	r, err := retry.New(llm(option.WithAPIKey("test-key"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(client)), cfg,
		retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()),
		retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) { *failed = append(*failed, ev.Err) }))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func chat(opts ...option.RequestOption) core.Runnable { return openai.NewChat(model, opts...) }

var chaosCfg = retry.RetryConfig{MaxRetries: 2, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond}

// Each fault of a chaos.Transport, read by openai-go and this adapter,
// reaches the retry layer as OpenAI's own answer does: a 429 waited for as
// its header or its message says, an overload and a 500 retried, a spent
// quota and a context overflow not retried (the overflow readable).
func TestChaosFaultsThroughOpenAIGo(t *testing.T) {
	for _, tc := range []struct {
		fault    chaos.Fault
		class    retry.Class // of the failed attempt, when the call succeeds
		errType  string      // of the failure, when it does not
		took     time.Duration
		requests int // that reached the server
	}{
		{fault: chaos.RateLimited(2 * time.Second), class: retry.ClassRateLimit, took: 2 * time.Second, requests: 1},
		{fault: chaos.RateLimitedInBody(1500 * time.Millisecond), class: retry.ClassRateLimit, took: 1500 * time.Millisecond, requests: 1},
		{fault: chaos.Overloaded(), class: retry.ClassOverloaded, requests: 1},
		{fault: chaos.ServerError(), class: retry.ClassServer, requests: 1},
		{fault: chaos.QuotaExhausted(), errType: "insufficient_quota"},
		{fault: chaos.ContextOverflow(128000, 126000, 4000), errType: "context_length_exceeded"},
		{fault: chaos.Latency(3 * time.Second), took: 3 * time.Second, requests: 1},
	} {
		synctest.Test(t, func(t *testing.T) {
			srv := llmhttptest.New(completion("Hello"))
			var failed []error
			r := throughChaos(t, srv, chaosCfg, &failed, chat, tc.fault.First(1))
			start := time.Now()
			out, err := r.Invoke(t.Context(), "Say hello")
			took := time.Since(start)
			if srv.Requests() != tc.requests {
				t.Errorf("%s: %d requests reached the server, want %d", tc.fault.Name(), srv.Requests(), tc.requests)
			}
			if tc.errType != "" {
				var re *retry.Error
				if !errors.As(err, &re) || re.Outcome != retry.OutcomeNotRetryable || re.Attempts != 1 || retry.ErrorType(err) != tc.errType {
					t.Errorf("%s: Invoke() = %v (error.type %q), want not_retryable after 1 attempt, %s", tc.fault.Name(), err, retry.ErrorType(err), tc.errType)
				}
				if o, ok := llmhttp.ParseOverflow(err); tc.errType == "context_length_exceeded" && (!ok || o != (llmhttp.Overflow{Limit: 128000, Input: 126000, Output: 4000, Requested: 130000})) {
					t.Errorf("ParseOverflow(%v) = %+v, %v; want the window and the counts", err, o, ok)
				}
				return
			}
			if err != nil || openai.Text(out) != "Hello" {
				t.Fatalf("%s: Invoke() = %v, %v; want Hello", tc.fault.Name(), out, err)
			}
			if tc.class != "" && (len(failed) != 1 || retry.ClassOf(failed[0]) != tc.class) {
				t.Errorf("%s: failed attempts %v, want one of class %s", tc.fault.Name(), failed, tc.class)
			}
			if took < tc.took || took > tc.took+10*time.Millisecond {
				t.Errorf("%s: took %v, want %v and at most a backoff more", tc.fault.Name(), took, tc.took)
			}
		})
	}
}

// A context overflow injected on the wire is read back by ParseOverflow
// through openai-go, and RepairOverflow fits the request to it.
func TestChaosOverflowIsRepaired(t *testing.T) {
	srv := llmhttptest.New(completion("Hello"))
	c := openai.NewChat(model, option.WithAPIKey("test-key"), option.WithBaseURL("http://openai.test/v1/"),
		option.WithHTTPClient(&http.Client{Transport: chaos.Transport(srv, chaos.ContextOverflow(8192, 6000, 4000).First(1))}))
	cfg := chaosCfg
	cfg.Repair = c.RepairOverflow
	r, err := retry.New(c, cfg, retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(t.Context(), "Say hello"); err != nil {
		t.Fatalf("Invoke() = %v, want the repaired request to succeed", err)
	}
	if bodies := srv.Bodies(); len(bodies) != 1 || !strings.Contains(bodies[0], `"max_completion_tokens":2192`) {
		t.Errorf("requests that reached the server: %q, want one asking for 2192 tokens (8192 - 6000)", bodies)
	}
}

// A Responses stream that chaos breaks after six events resumes exactly
// after the sixth: every event once, in order, then the GET that resumes
// it.
func TestChaosBrokenResponsesStreamResumesExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		script := answer("resp_chaos")
		srv := llmhttptest.New(script.Stream(-1, nil), script.After(5))
		cfg := chaosCfg
		cfg.ResumeStreams = true
		var failed []error
		r := throughChaos(t, srv, cfg, &failed, func(opts ...option.RequestOption) core.Runnable {
			return openai.NewResponses(model, append(opts, openai.WithResumableStreams())...)
		}, chaos.StreamBroken(6).First(1))
		ch, err := r.Stream(t.Context(), "Say hello")
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		var text strings.Builder
		for v := range ch {
			e, ok := v.(responses.ResponseStreamEventUnion)
			if !ok {
				t.Fatalf("stream value %T %v", v, v)
			}
			seqs = append(seqs, e.SequenceNumber)
			if e.Type == "response.output_text.delta" {
				text.WriteString(e.Delta)
			}
		}
		if text.String() != "Hello, resumed world" || fmt.Sprint(seqs) != "[0 1 2 3 4 5 6 7]" {
			t.Errorf("stream %q, sequence numbers %v; want the whole answer, each event once", text.String(), seqs)
		}
		if urls := srv.URLs(); len(urls) != 2 || !strings.HasSuffix(urls[1], "/responses/resp_chaos?starting_after=5&stream=true") {
			t.Errorf("requests %v, want the stream, then its resumption after event 5", urls)
		}
	})
}

// An error event that chaos puts in a Chat stream before its first delta
// fails the attempt, and the retry layer makes another.
func TestChaosStreamErrorEventIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stream := llmhttptest.SSE(chunk("Hel"), chunk("lo"), "[DONE]")
		srv := llmhttptest.New(stream, stream)
		var failed []error
		r := throughChaos(t, srv, chaosCfg, &failed, chat, chaos.StreamError(0).First(1))
		ch, err := r.Stream(t.Context(), "Say hello")
		if err != nil {
			t.Fatal(err)
		}
		joined, last := llmhttptest.Drain(ch, openai.Text)
		if joined != "Hello" || srv.Requests() != 2 || len(failed) != 1 {
			t.Errorf("stream %q (last %v) in %d requests, failed %v; want Hello after one failed attempt", joined, last, srv.Requests(), failed)
		}
	})
}

// A seeded rate fires on the same requests again, through the SDK.
func TestChaosSeedsReproduceThroughOpenAIGo(t *testing.T) {
	run := func(seed uint64) string {
		srv := llmhttptest.NewFunc(func(*http.Request, string) llmhttptest.Reply { return completion("Hello") })
		var failed []error
		r := throughChaos(t, srv, retry.RetryConfig{MaxRetries: 0}, &failed, chat, chaos.Overloaded().Rate(0.4, seed))
		var b strings.Builder
		for range 40 {
			if _, err := r.Invoke(t.Context(), "Say hello"); err != nil {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	a, b, c := run(5), run(5), run(6)
	if a != b || a == c || !strings.Contains(a, "x") || !strings.Contains(a, ".") {
		t.Errorf("seed 5: %s and %s; seed 6: %s; want the same for the same seed, another for another", a, b, c)
	}
}

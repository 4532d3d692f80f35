package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/chaos"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// words is a provider that answers "ok", and streams the chunks 1 to n,
// resuming after any chunk it is given.
type words struct {
	n     int
	mu    sync.Mutex
	opens int // streams opened and resumed
}

func (w *words) Invoke(context.Context, any, ...core.Option) (any, error) { return "ok", nil }

func (w *words) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(w.Invoke).Batch(ctx, in, opts...)
}

func (w *words) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	return w.from(ctx, 1), nil
}

func (w *words) Resume(ctx context.Context, _ any, last any, _ ...core.Option) (<-chan any, error) {
	return w.from(ctx, last.(int)+1), nil
}

func (w *words) CanResume(context.Context) bool { return true }

func (w *words) from(ctx context.Context, first int) <-chan any {
	w.mu.Lock()
	w.opens++
	w.mu.Unlock()
	ch := make(chan any)
	go func() {
		defer close(ch)
		for i := first; i <= w.n; i++ {
			if !streams.Send(ctx, ch, i) {
				return
			}
		}
	}()
	return ch
}

func (w *words) opened() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.opens
}

// retried is inner with faults, behind a retry layer that waits 10 ms
// between attempts unless the server says otherwise; failed gets the
// error of each attempt that failed.
func retried(t *testing.T, inner core.Runnable, cfg retry.RetryConfig, failed *[]error, faults ...chaos.Fault) core.Runnable {
	t.Helper()
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	cfg.InitialBackoff, cfg.MaxBackoff = 10*time.Millisecond, 10*time.Millisecond
	r, err := retry.New(chaos.New(inner, faults...), cfg,
		retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()),
		retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) { *failed = append(*failed, ev.Err) }))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Each call fault reaches the retry layer as the provider's answer would:
// the class its status says, the wait its server asked for, no retry for
// what none fixes, in every provider's format.
func TestCallFaultsReachTheRetryLayerAsTheProvidersAnswers(t *testing.T) {
	for i, tc := range []struct {
		fault   chaos.Fault
		class   retry.Class // of the first failure; "" when the call fails at once
		outcome retry.Outcome
		took    time.Duration // the least the call takes
	}{
		{chaos.RateLimited(2 * time.Second), retry.ClassRateLimit, "", 2 * time.Second},
		{chaos.RateLimited(2 * time.Second).As(chaos.Anthropic), retry.ClassRateLimit, "", 2 * time.Second},
		{chaos.RateLimited(2 * time.Second).As(chaos.Gemini), retry.ClassRateLimit, "", 2 * time.Second},
		{chaos.RateLimitedInBody(1500 * time.Millisecond), retry.ClassRateLimit, "", 1500 * time.Millisecond},
		{chaos.RateLimitedInBody(1500 * time.Millisecond).As(chaos.Gemini), retry.ClassRateLimit, "", 1500 * time.Millisecond},
		{chaos.Overloaded(), retry.ClassOverloaded, "", 0},
		{chaos.Overloaded().As(chaos.Anthropic), retry.ClassOverloaded, "", 0},
		{chaos.ServerError().As(chaos.Gemini), retry.ClassServer, "", 0},
		{chaos.QuotaExhausted(), "", retry.OutcomeNotRetryable, 0},
		{chaos.QuotaExhausted().As(chaos.Anthropic), "", retry.OutcomeNotRetryable, 0},
		{chaos.QuotaExhausted().As(chaos.Gemini), "", retry.OutcomeNotRetryable, 0},
		{chaos.ContextOverflow(128000, 126000, 4000), "", retry.OutcomeNotRetryable, 0},
		{chaos.Latency(3 * time.Second), "", "", 3 * time.Second},
	} {
		name := fmt.Sprintf("%s (case %d)", tc.fault.Name(), i)
		synctest.Test(t, func(t *testing.T) {
			var failed []error
			r := retried(t, &words{}, retry.RetryConfig{}, &failed, tc.fault.First(1))
			start := time.Now()
			out, err := r.Invoke(t.Context(), "q")
			took := time.Since(start)
			if tc.outcome != "" {
				var re *retry.Error
				if !errors.As(err, &re) || re.Outcome != tc.outcome || re.Attempts != 1 {
					t.Fatalf("%s: Invoke() = %v, want %s after 1 attempt", name, err, tc.outcome)
				}
				return
			}
			if err != nil || out != "ok" {
				t.Fatalf("%s: Invoke() = %v, %v; want ok", name, out, err)
			}
			if tc.class != "" && (len(failed) != 1 || retry.ClassOf(failed[0]) != tc.class) {
				t.Errorf("%s: failed attempts %v, want one of class %s", name, failed, tc.class)
			}
			if took < tc.took || took > tc.took+10*time.Millisecond {
				t.Errorf("%s: took %v, want %v and at most a backoff more", name, took, tc.took)
			}
		})
	}
}

// A context overflow says how far over the window the request went, in
// words llmhttp.ParseOverflow reads, in each provider's format.
func TestContextOverflowIsReadable(t *testing.T) {
	for p, want := range map[chaos.Provider]llmhttp.Overflow{
		chaos.OpenAI:    {Limit: 8192, Input: 7000, Output: 2000, Requested: 9000},
		chaos.Anthropic: {Limit: 8192, Input: 7000, Output: 2000, Requested: 9000},
		chaos.Gemini:    {Limit: 8192, Input: 9000, Requested: 9000},
	} {
		_, err := chaos.New(&words{}, chaos.ContextOverflow(8192, 7000, 2000).As(p).First(1)).Invoke(t.Context(), "q")
		got, ok := llmhttp.ParseOverflow(err)
		if !ok || got != want || retry.IsRetryable(err) {
			t.Errorf("%s: ParseOverflow(%v) = %+v, %v; want %+v, not retryable", p, err, got, ok, want)
		}
	}
}

// A hung call ends when its context does.
func TestHangEndsWithTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		start := time.Now()
		_, err := chaos.New(&words{}, chaos.Hang().First(1)).Invoke(ctx, "q")
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 5*time.Second {
			t.Errorf("Invoke() = %v after %v, want the deadline after 5s", err, time.Since(start))
		}
	})
}

// drain returns a stream's chunks and its error value.
func drain(ch <-chan any) ([]any, error) {
	var chunks []any
	var last error
	for v := range ch {
		if err, ok := v.(error); ok {
			last = err
			continue
		}
		chunks = append(chunks, v)
	}
	return chunks, last
}

// Stream faults act after the first chunks: a break or a stall resumes
// exactly where it stopped when the retry layer resumes streams; an
// error event before the first chunk is retried; a break without resume
// is the consumer's to see, after the chunks it has.
func TestStreamFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  chaos.Fault
		cfg    retry.RetryConfig
		chunks string
		fails  bool
		opens  int
	}{
		{"broken, resumed", chaos.StreamBroken(2), retry.RetryConfig{ResumeStreams: true}, "[1 2 3 4 5]", false, 2},
		{"stalled, resumed", chaos.StreamStalled(3), retry.RetryConfig{ResumeStreams: true, ChunkTimeout: time.Second}, "[1 2 3 4 5]", false, 2},
		{"error event first", chaos.StreamError(0), retry.RetryConfig{}, "[1 2 3 4 5]", false, 2},
		{"error event after output, resumed", chaos.StreamError(4).As(chaos.Anthropic), retry.RetryConfig{ResumeStreams: true}, "[1 2 3 4 5]", false, 2},
		{"broken, not resumed", chaos.StreamBroken(2), retry.RetryConfig{}, "[1 2]", true, 1},
	} {
		synctest.Test(t, func(t *testing.T) {
			w := &words{n: 5}
			var failed []error
			ch, err := retried(t, w, tc.cfg, &failed, tc.fault.First(1)).Stream(t.Context(), "q")
			if err != nil {
				t.Fatal(err)
			}
			chunks, last := drain(ch)
			if got := fmt.Sprint(chunks); got != tc.chunks || (last != nil) != tc.fails || w.opened() != tc.opens {
				t.Errorf("%s: chunks %s, error %v, %d streams opened; want %s, failed %v, %d", tc.name, got, last, w.opened(), tc.chunks, tc.fails, tc.opens)
			}
		})
	}
}

// fired reports, for n calls of a fresh Runnable with f, which failed.
func fired(t *testing.T, f chaos.Fault, n int, ctx func(i int) context.Context) []bool {
	t.Helper()
	r := chaos.New(&words{}, f)
	out := make([]bool, n)
	for i := range out {
		c := t.Context()
		if ctx != nil {
			c = ctx(i)
		}
		_, err := r.Invoke(c, "q")
		out[i] = err != nil
	}
	return out
}

func count(b []bool) (n int) {
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
}

type tenantKey struct{}

// When a fault fires: at a rate whose seed gives the same calls again,
// its first n times, when a predicate says so, all of them together; and
// never when nothing says when.
func TestWhenAFaultFires(t *testing.T) {
	a, b := fired(t, chaos.ServerError().Rate(0.3, 42), 300, nil), fired(t, chaos.ServerError().Rate(0.3, 42), 300, nil)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("the same seed fired on different calls")
	}
	if n := count(a); n < 60 || n > 120 {
		t.Errorf("a rate of 0.3 fired %d times in 300 calls", n)
	}
	if c := fired(t, chaos.ServerError().Rate(0.3, 43), 300, nil); fmt.Sprint(a) == fmt.Sprint(c) {
		t.Error("seeds 42 and 43 fired on the same calls")
	}
	if n := count(fired(t, chaos.ServerError().First(3), 10, nil)); n != 3 {
		t.Errorf("First(3) fired %d times in 10 calls", n)
	}
	tenant := func(i int) context.Context { return context.WithValue(t.Context(), tenantKey{}, i%2 == 0) }
	even := func(ctx context.Context) bool { v, _ := ctx.Value(tenantKey{}).(bool); return v }
	if got := fired(t, chaos.ServerError().When(even), 4, tenant); fmt.Sprint(got) != "[true false true false]" {
		t.Errorf("When fired on %v, want the even calls", got)
	}
	if n := count(fired(t, chaos.ServerError().When(even).First(1), 6, tenant)); n != 1 {
		t.Errorf("When and First(1) fired %d times, want once", n)
	}
	if n := count(fired(t, chaos.ServerError(), 10, nil)); n != 0 {
		t.Errorf("a fault with no rate, count or predicate fired %d times, want none: off by default", n)
	}
	if n := count(fired(t, chaos.ServerError().Rate(0, 1), 10, nil)); n != 0 {
		t.Errorf("a rate of 0 fired %d times", n)
	}
}

// An injection is an event on the attempt span, naming the fault.
func TestInjectionIsOnTheAttemptSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	r, err := retry.New(chaos.New(&words{}, chaos.Overloaded().First(1)), retry.RetryConfig{MaxRetries: 1, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond},
		retry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(t.Context(), "q"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range rec.Ended() {
		for _, ev := range s.Events() {
			if ev.Name == "chaos.injected" {
				for _, kv := range ev.Attributes {
					got = append(got, fmt.Sprintf("%s %s=%s", s.Name(), kv.Key, kv.Value.String()))
				}
			}
		}
	}
	if fmt.Sprint(got) != "[retry.attempt chaos.fault=overloaded]" {
		t.Errorf("chaos.injected events: %v, want one on the first attempt span", got)
	}
}

// Bad arguments fail every call with an error naming them, which no
// retry fixes; none panics.
func TestBadArguments(t *testing.T) {
	for _, tc := range []struct {
		r    *chaos.Runnable
		want string
	}{
		{chaos.New(nil), "nil Runnable"},
		{chaos.New(&words{}, chaos.Fault{}), "without a constructor"},
		{chaos.New(&words{}, chaos.ServerError().Rate(1.5, 1)), "Rate(1.5)"},
		{chaos.New(&words{}, chaos.ServerError().First(0)), "First(0)"},
		{chaos.New(&words{}, chaos.ServerError().When(nil)), "When(nil)"},
		{chaos.New(&words{}, chaos.ServerError().As("mistral")), `As("mistral")`},
		{chaos.New(&words{}, chaos.RateLimited(-time.Second)), "RateLimited(-1s)"},
		{chaos.New(&words{}, chaos.RateLimitedInBody(0)), "RateLimitedInBody(0s)"},
		{chaos.New(&words{}, chaos.Latency(0)), "Latency(0s)"},
		{chaos.New(&words{}, chaos.StreamBroken(-1)), "StreamBroken(-1)"},
		{chaos.New(&words{}, chaos.ContextOverflow(100, 50, 40)), "ContextOverflow(100, 50, 40)"},
	} {
		_, err := tc.r.Invoke(t.Context(), "q")
		if err == nil || !strings.Contains(err.Error(), tc.want) || retry.IsRetryable(err) {
			t.Errorf("Invoke() = %v, want a permanent error naming %s", err, tc.want)
		}
		if _, err := tc.r.Stream(t.Context(), "q"); err == nil {
			t.Errorf("Stream() with %s: no error", tc.want)
		}
	}
}

package retry

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	mnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/budget"
	"github.com/steadfast-go/steadfast/core"
)

// A layer makes its first attempt bare only when nothing of it watches an
// attempt that succeeds: each feature that would turns it off.
func TestOnlyAPlainLayerMakesItsFirstAttemptBare(t *testing.T) {
	inner := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	off := []Option{WithTracerProvider(tnoop.NewTracerProvider()), WithMeterProvider(mnoop.NewMeterProvider())}
	with := func(opts ...Option) []Option { return append(off[:len(off):len(off)], opts...) }
	for _, c := range []struct {
		name string
		cfg  func(*RetryConfig)
		opts []Option
		bare bool
	}{
		{"telemetry off", nil, off, true},
		{"a tracer", nil, []Option{WithTracerProvider(sdktrace.NewTracerProvider()), WithMeterProvider(mnoop.NewMeterProvider())}, false},
		{"a meter (the globals)", nil, []Option{WithTracerProvider(tnoop.NewTracerProvider())}, false},
		{"the GenAI conventions", nil, with(WithGenAIConventions()), true}, // they need telemetry on: off, they record nothing
		{"a budget", nil, with(WithBudget(RecommendedBudget())), false},
		{"per-operation policies", nil, with(WithOperationConfig("tool", DefaultRetryConfig())), false},
		{"PerAttemptTimeout", func(c *RetryConfig) { c.PerAttemptTimeout = time.Second }, off, false},
		{"FirstChunkTimeout", func(c *RetryConfig) { c.FirstChunkTimeout = time.Second }, off, false},
		{"CheckOutput", func(c *RetryConfig) { c.CheckOutput = func(context.Context, any, any) error { return nil } }, off, false},
		{"MaxRetryTokens", func(c *RetryConfig) { c.MaxRetryTokens = 1000 }, off, false},
		{"a hook on retries", nil, with(WithOnRetry(func(context.Context, RetryEvent) {})), true}, // it hears of failures only
	} {
		cfg := DefaultRetryConfig()
		if c.cfg != nil {
			c.cfg(&cfg)
		}
		r, err := New(inner, cfg, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if r.bare != c.bare {
			t.Errorf("%s: bare = %v, want %v", c.name, r.bare, c.bare)
		}
	}
}

// A bare first attempt that fails hands the call on: the second attempt
// is number 2 of the same call (its InvocationID, its State), and a
// context carrying a run or a continuation is never made bare.
func TestABareFirstAttemptHandsItsFailureOn(t *testing.T) {
	synctest.Test(t, testABareFirstAttemptHandsItsFailureOn)
}

func testABareFirstAttemptHandsItsFailureOn(t *testing.T) {
	var seen []AttemptInfo
	var states []*core.State
	inner := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		a, _ := AttemptFromContext(ctx)
		seen, states = append(seen, a), append(states, core.StateFrom(ctx))
		if len(seen) == 1 {
			return nil, unavailable{}
		}
		return "ok", nil
	})
	cfg := DefaultRetryConfig()
	cfg.InitialBackoff, cfg.MaxBackoff = time.Nanosecond, time.Nanosecond
	r, err := New(inner, cfg, WithTracerProvider(tnoop.NewTracerProvider()), WithMeterProvider(mnoop.NewMeterProvider()))
	if err != nil || !r.bare {
		t.Fatalf("New: %v, bare %v", err, r.bare)
	}
	if out, err := r.Invoke(context.Background(), "q", core.WithOperation("llm")); out != "ok" || err != nil {
		t.Fatalf("Invoke = %v, %v", out, err)
	}
	if len(seen) != 2 || seen[0].Attempt != 1 || seen[1].Attempt != 2 || seen[0].InvocationID != seen[1].InvocationID ||
		seen[0].Operation != "llm" || seen[1].MaxAttempts != cfg.MaxRetries+1 || states[0] != states[1] || states[0] == nil {
		t.Fatalf("attempts %+v, states %p %p: want 1 then 2 of one call, one State", seen, states[0], states[1])
	}
	seen = nil
	ctx, _ := budget.WithRun(context.Background(), budget.Run{Calls: 5})
	if _, err := r.Invoke(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	if spent, _ := budget.Spent(ctx); spent.Calls != 2 {
		t.Fatalf("under a run, two attempts drew %d calls: the first was made bare", spent.Calls)
	}
}

// Under faults a bare first attempt ends the call as the call record's
// would: a deadline, a permanent error, a cancel after a retry, a panic;
// the same outcome and attempts, or the same panic, bare or traced.
func TestABareFirstAttemptFailsAsTheRecordDoes(t *testing.T) {
	faults := map[string]func(ctx context.Context, cancel context.CancelFunc) (any, error){
		"a deadline": func(ctx context.Context, _ context.CancelFunc) (any, error) { <-ctx.Done(); return nil, ctx.Err() },
		"permanent": func(context.Context, context.CancelFunc) (any, error) {
			return nil, Permanent(errors.New("400 bad request"))
		},
		"503 then a cancel": func(ctx context.Context, cancel context.CancelFunc) (any, error) {
			if a, _ := AttemptFromContext(ctx); a.Attempt == 2 {
				cancel()
			}
			return nil, unavailable{}
		},
		"a panic": func(context.Context, context.CancelFunc) (any, error) { panic("inner") },
	}
	for name, fault := range faults {
		synctest.Test(t, func(t *testing.T) {
			play := func(tp trace.TracerProvider) (bare bool, got string) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				inner := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) { return fault(ctx, cancel) })
				r, err := New(inner, DefaultRetryConfig(), WithTracerProvider(tp), WithMeterProvider(mnoop.NewMeterProvider()))
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if v := recover(); v != nil {
						bare, got = r.bare, fmt.Sprint("panic: ", v)
					}
				}()
				_, err = r.Invoke(ctx, "q")
				var e *Error
				if !errors.As(err, &e) {
					return r.bare, fmt.Sprintf("%v, not a *Error", err)
				}
				return r.bare, fmt.Sprintf("%s after %d attempts", e.Outcome, e.Attempts)
			}
			isBare, bare := play(tnoop.NewTracerProvider())
			isTraced, traced := play(sdktrace.NewTracerProvider())
			t.Logf("%s: %s", name, bare)
			if !isBare || isTraced || bare != traced {
				t.Errorf("%s: bare (%v) %q, traced (%v) %q: want the same", name, isBare, bare, !isTraced, traced)
			}
		})
	}
}

// unavailable is a provider's 503.
type unavailable struct{}

func (unavailable) Error() string   { return "503" }
func (unavailable) StatusCode() int { return 503 }

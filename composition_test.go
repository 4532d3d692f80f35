package steadfast_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// The recommended order: retry outermost, then the breaker, then the rate
// limiter, then the provider, so that every attempt passes the breaker and
// takes a token.
func TestCompositionBreakerStopsRetriesDuringOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errs := make([]error, 100)
		for i := range errs {
			errs[i] = &providerError{code: 503}
		}
		provider, calls := scriptedLLM(errs...) // a long outage
		lim := rate.NewLimiter(rate.Every(time.Hour), 10)
		var opened int
		st := gobreaker.Settings{
			Name:        "llm",
			Timeout:     time.Minute,
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 3 },
		}
		cfg := retry.RetryConfig{MaxRetries: 5, InitialBackoff: time.Second, MaxBackoff: 10 * time.Second}
		r := core.Chain(provider,
			retry.Middleware(cfg),
			breaker.Middleware(st, breaker.WithOnStateChange(func(_ string, _, to gobreaker.State) {
				if to == gobreaker.StateOpen {
					opened++
				}
			})),
			ratelimit.Middleware(ratelimit.InProcess(lim)))

		start := time.Now()
		_, err := r.Invoke(t.Context(), "q")
		var re *retry.Error
		if !errors.As(err, &re) || re.Outcome != retry.OutcomeNotRetryable || re.Attempts != 4 {
			t.Fatalf("Invoke() error = %v, want not_retryable after 4 attempts (3 failures, then the open circuit)", err)
		}
		if !errors.Is(err, gobreaker.ErrOpenState) {
			t.Errorf("error = %v, want it to match gobreaker.ErrOpenState", err)
		}
		if calls() != 3 || opened != 1 {
			t.Errorf("provider calls, openings = %d, %d, want 3, 1", calls(), opened)
		}
		// Each attempt that reached the provider took a token; the rejected
		// fourth did not get that far.
		if got := lim.Tokens(); got < 6.99 || got > 7.01 {
			t.Errorf("tokens left = %.2f, want 7", got)
		}
		if got := time.Since(start); got != 7*time.Second {
			t.Errorf("took %v, want 7s (1s + 2s + 4s of backoff, then no more)", got)
		}

		// While the circuit is open, calls fail at once without reaching
		// the provider.
		start = time.Now()
		_, err = r.Invoke(t.Context(), "q")
		if !errors.As(err, &re) || re.Attempts != 1 || calls() != 3 || time.Since(start) != 0 {
			t.Errorf("second call: %v after %v, provider calls %d; want 1 attempt at once and no provider call", err, time.Since(start), calls())
		}
	})
}

// attributed is a provider that knows its GenAI attributes.
type attributed struct{ core.Runnable }

func (attributed) CallAttributes() []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String("gen_ai.provider.name", "test")}
}

func TestCompositionKeepsCallAttributes(t *testing.T) {
	llm, _ := scriptedLLM()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	r := core.Chain(attributed{llm},
		retry.Middleware(retry.DefaultRetryConfig(), retry.WithTracerProvider(tp)),
		breaker.Middleware(gobreaker.Settings{}),
		ratelimit.Middleware(ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1))))
	if _, err := r.Invoke(t.Context(), "q"); err != nil {
		t.Fatal(err)
	}
	for _, s := range rec.Ended() {
		if s.Name() != "retry.invoke" {
			continue
		}
		for _, kv := range s.Attributes() {
			if kv.Key == "gen_ai.provider.name" && kv.Value.AsString() == "test" {
				return
			}
		}
		t.Errorf("call span attributes = %v, want the provider's gen_ai.provider.name through the breaker and limiter", s.Attributes())
		return
	}
	t.Fatal("no retry.invoke span")
}

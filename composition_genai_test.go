package steadfast_test

import (
	"context"
	"strings"
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
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// deployment is a provider adapter of one model: it sends its request
// where llmhttp.Inference is, after the gates above it, and fails with
// errs in order.
type deployment struct {
	model string
	errs  []error
	sent  int
}

func (d *deployment) CallAttributes() []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", "openai"), attribute.String("gen_ai.request.model", d.model)}
}

func (d *deployment) Invoke(ctx context.Context, _ any, _ ...core.Option) (any, error) {
	ctx = llmhttp.Inference(ctx, d.CallAttributes()...)
	time.Sleep(time.Second)
	if d.sent++; d.sent <= len(d.errs) {
		return nil, d.errs[d.sent-1]
	}
	r := llmhttp.Response{Model: d.model, HasUsage: true, InputTokens: 4, OutputTokens: 2}
	r.Record(ctx)
	return "ok", nil
}

func (d *deployment) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(d.Invoke).Batch(ctx, in, opts...)
}

func (d *deployment) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(d.Invoke).Stream(ctx, in, opts...)
}

// Retry around a breaker around a rate limiter around a pool of two
// deployments, in the GenAI conventions' mode: each request the pool
// sends is one inference span, named for the deployment that got it,
// under its attempt; neither the call span nor the attempt spans (where
// the pool notes the deployment) carry an inference's gen_ai.*; the
// attempts the open breaker refuses emit no inference at all (#72).
func TestCompositionGenAIInferences(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		down := []error{&providerError{code: 500}, &providerError{code: 500}, &providerError{code: 500}}
		a, b := &deployment{model: "a", errs: down}, &deployment{model: "b", errs: down}
		p, err := pool.New([]pool.Deployment{{Name: "a", Runnable: a}, {Name: "b", Runnable: b}})
		if err != nil {
			t.Fatal(err)
		}
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		st := gobreaker.Settings{Name: "llm", Timeout: time.Minute,
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 3 }}
		r := core.Chain(p,
			retry.Middleware(retry.RetryConfig{MaxRetries: 5, InitialBackoff: time.Second, MaxBackoff: time.Second},
				retry.WithTracerProvider(tp), retry.WithGenAIConventions()),
			breaker.Middleware(st),
			ratelimit.Middleware(ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1))))
		_, err = r.Invoke(t.Context(), "q")
		if err == nil {
			t.Fatal("Invoke() succeeded through an open breaker")
		}
		attempts, inferences := 0, map[string]int{}
		for _, s := range rec.Ended() {
			switch {
			case s.Name() == "retry.attempt":
				attempts++
			case strings.HasPrefix(s.Name(), "chat "):
				inferences[s.Name()]++
			}
			if s.Name() == "retry.attempt" || s.Name() == "retry.invoke" {
				for _, kv := range s.Attributes() {
					if strings.HasPrefix(string(kv.Key), "gen_ai.") {
						t.Errorf("%s carries %s", s.Name(), kv.Key)
					}
				}
			}
		}
		sent := a.sent + b.sent
		if sent != 3 || attempts <= sent {
			t.Fatalf("%d requests sent over %d attempts, want 3 before the breaker opened and a refused attempt after", sent, attempts)
		}
		if inferences["chat a"] != a.sent || inferences["chat b"] != b.sent {
			t.Errorf("inference spans %v, want one per request: a %d, b %d", inferences, a.sent, b.sent)
		}
	})
}

package retry_test

import (
	"context"
	"fmt"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// In the GenAI conventions' mode each request that reached the provider
// is an inference span of its own, with its error or its resend count;
// the call span keeps steadfast's attributes only.
func ExampleWithGenAIConventions() {
	calls := 0
	chat := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		ctx = llmhttp.Inference(ctx, semconv.GenAIOperationNameChat, // as the providers' adapters do
			semconv.GenAIProviderNameKey.String("openai"), semconv.GenAIRequestModelKey.String("gpt-4o-mini"))
		if calls++; calls == 1 {
			return nil, unavailable{}
		}
		return "Hello", nil
	})
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond}
	r, err := retry.New(chat, cfg, retry.WithTracerProvider(tp), retry.WithGenAIConventions())
	if err != nil {
		panic(err)
	}
	if _, err := r.Invoke(context.Background(), "Say hello"); err != nil {
		panic(err)
	}
	for _, s := range spans.Ended() {
		if s.Name() == "chat gpt-4o-mini" {
			for _, kv := range s.Attributes() {
				if kv.Key == "error.type" || kv.Key == "http.request.resend_count" {
					fmt.Println(s.Name(), kv.Key, kv.Value.String())
				}
			}
		}
	}
	// Output:
	// chat gpt-4o-mini error.type 503
	// chat gpt-4o-mini http.request.resend_count 1
}

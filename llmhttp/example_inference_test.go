package llmhttp_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// A provider adapter marks where its request leaves with Inference, and
// records the response with the context it returned: under a retry layer
// in the GenAI conventions' mode, each request is a CLIENT inference span
// under its attempt.
func ExampleInference() {
	chat := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		// A limiter's wait or a breaker's refusal would come here, before
		// the request: not part of the inference.
		ctx = llmhttp.Inference(ctx, semconv.GenAIOperationNameChat,
			semconv.GenAIProviderNameKey.String("openai"), semconv.GenAIRequestModelKey.String("gpt-4o-mini"))
		// res, err := client.Chat.Completions.New(ctx, params)
		r := llmhttp.Response{Model: "gpt-4o-mini-2024-07-18", HasUsage: true, InputTokens: 12, OutputTokens: 3}
		r.Record(ctx)
		return "Hello", nil
	})
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	r, err := retry.New(chat, retry.DefaultRetryConfig(), retry.WithTracerProvider(tp), retry.WithGenAIConventions())
	if err != nil {
		panic(err)
	}
	if _, err := r.Invoke(context.Background(), "Say hello"); err != nil {
		panic(err)
	}
	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.SpanKind())
	}
	// Output:
	// chat gpt-4o-mini client
	// retry.attempt internal
	// retry.invoke internal
}

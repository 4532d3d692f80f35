package retry

import (
	"context"
	"fmt"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadfast-go/steadfast/core"
)

// Operation names may come from data: the cache of prebuilt attributes
// stops growing at maxCachedOps, and calls past it are still labelled
// right.
func TestOperationCacheIsBounded(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ok := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	r := NewRetryRunnable(ok, RetryConfig{}, WithTracerProvider(tp))
	const ops = maxCachedOps + 500
	for i := range ops {
		if _, err := r.Invoke(t.Context(), "q", core.WithOperation(fmt.Sprintf("tool-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.tel.cachedOpAttrs(); got != maxCachedOps {
		t.Errorf("cached operations = %d, want the bound %d", got, maxCachedOps)
	}
	spans := rec.Ended()
	last := spans[len(spans)-1]
	for _, kv := range last.Attributes() {
		if kv.Key == attrOperation {
			if want := fmt.Sprintf("tool-%d", ops-1); kv.Value.AsString() != want {
				t.Errorf("retry.operation = %q, want %q", kv.Value.AsString(), want)
			}
			return
		}
	}
	t.Errorf("uncached call span has no retry.operation: %v", last.Attributes())
}

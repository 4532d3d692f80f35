package e2e

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	steadfasttemporal "github.com/steadfast-go/steadfast/adapters/temporal"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// With Temporal's tracing interceptor on the worker, the retry layer's
// call span is a child of the activity's span, and its attempt spans
// children of the call span: one trace from the workflow to each request.
func TestRetrySpansAreChildrenOfTheActivitySpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := trace.NewTracerProvider(trace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tracing, err := opentelemetry.NewTracingInterceptor(opentelemetry.TracerOptions{Tracer: tp.Tracer("temporal")})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	model := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
		if calls.Add(1) == 1 {
			return nil, errOverloaded
		}
		return "summary", nil
	})
	r, err := retry.New(model, retry.RetryConfig{MaxRetries: 2, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond},
		retry.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	ts := newServer(t)
	ts.NewWorkerWithOptions(workflowQueue, func(reg worker.Registry) {
		reg.RegisterWorkflowWithOptions(textWorkflow, workflow.RegisterOptions{Name: "call"})
		reg.RegisterActivityWithOptions(steadfasttemporal.Activity[string, string](r), activityOptions("call"))
	}, worker.Options{Interceptors: []interceptor.WorkerInterceptor{tracing, steadfasttemporal.NewWorkerInterceptor()}})
	run, err := ts.GetDefaultClient().ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{TaskQueue: workflowQueue}, "call", "article")
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	_ = tp.ForceFlush(t.Context())

	var activitySpan, callSpan trace.ReadOnlySpan
	var attempts []trace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch {
		case strings.HasPrefix(s.Name(), "RunActivity:call"):
			activitySpan = s
		case s.Name() == "retry.invoke":
			callSpan = s
		case s.Name() == "retry.attempt":
			attempts = append(attempts, s)
		}
	}
	if activitySpan == nil || callSpan == nil {
		t.Fatalf("spans: activity %v, retry call %v; want both", activitySpan != nil, callSpan != nil)
	}
	if callSpan.Parent().SpanID() != activitySpan.SpanContext().SpanID() || callSpan.SpanContext().TraceID() != activitySpan.SpanContext().TraceID() {
		t.Errorf("retry.invoke's parent is %v, want the activity span %v", callSpan.Parent().SpanID(), activitySpan.SpanContext().SpanID())
	}
	if len(attempts) != 2 {
		t.Errorf("%d attempt spans, want 2", len(attempts))
	}
	for _, a := range attempts {
		if a.Parent().SpanID() != callSpan.SpanContext().SpanID() {
			t.Errorf("an attempt span's parent is %v, want the call span", a.Parent().SpanID())
		}
	}
}

// textWorkflow runs the activity "call", whose output is text.
func textWorkflow(ctx workflow.Context, input string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var out string
	err := workflow.ExecuteActivity(ctx, "call", input).Get(ctx, &out)
	return out, err
}

// errOverloaded is a provider's 503.
var errOverloaded = statusError(503)

type statusError int

func (e statusError) Error() string   { return "provider: overloaded" }
func (e statusError) StatusCode() int { return int(e) }

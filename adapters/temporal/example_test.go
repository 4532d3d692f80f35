package temporal_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/steadfast-go/steadfast/adapters/temporal"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// A quota 429 that the retry layer stopped on is NonRetryable for
// Temporal, with the API's code as its type.
func ExampleToApplicationError() {
	quota := llmhttp.Classify(&llmhttp.APIError{Status: 429, Code: "insufficient_quota", Err: errors.New("429 Too Many Requests"), Dead: true}, nil, "")
	err := temporal.ToApplicationError(&retry.Error{Outcome: retry.OutcomeNotRetryable, Attempts: 1, Err: quota})
	var app *sdktemporal.ApplicationError
	if errors.As(err, &app) {
		fmt.Println(app.Type(), app.NonRetryable())
	}
	// Output: insufficient_quota true
}

// summarise stands for an LLM call behind steadfast's retry layer.
var summarise core.Runnable = core.RunnableFunc(func(_ context.Context, in any, _ ...core.Option) (any, error) {
	return fmt.Sprintf("summary of %v", in), nil
})

// An activity that calls a model through the retry layer, and the
// workflow that runs it with the RetryPolicy to set: unlimited attempts
// are safe, since the call's own are counted across activity attempts
// and end NonRetryable.
func ExampleActivity() {
	r, err := retry.New(summarise, retry.DefaultRetryConfig())
	if err != nil {
		panic(err)
	}
	summariseActivity := temporal.Activity[string, string](r, temporal.WithHandOff(5*time.Second))

	pipeline := func(ctx workflow.Context, article string) (string, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: 2 * time.Minute,
			HeartbeatTimeout:    10 * time.Second, // how a dead worker is noticed
			RetryPolicy: &sdktemporal.RetryPolicy{
				InitialInterval: time.Second,
				MaximumAttempts: 0, // unlimited: steadfast bounds the call
			},
		})
		var summary string
		err := workflow.ExecuteActivity(ctx, "summarise", article).Get(ctx, &summary)
		return summary, err
	}

	register := func(w worker.Worker) {
		w.RegisterWorkflow(pipeline)
		w.RegisterActivityWithOptions(summariseActivity, activityOptions("summarise"))
	}
	_ = register
}

// A streaming activity: each chunk goes to a subscriber (a pub/sub topic,
// a websocket, a workflow signal) keyed by its place in the stream, so
// that chunks handed to it again after a worker died are kept once.
func ExampleStreamActivity() {
	var model core.Runnable = summarise // a Runnable whose streams resume, as openai.Responses with WithResumableStreams
	r, err := retry.New(model, retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: 10 * time.Second, ResumeStreams: true})
	if err != nil {
		panic(err)
	}
	publish := func(ctx context.Context, chunk any) error {
		d, _ := temporal.DeliveryFrom(ctx)
		fmt.Printf("%s #%d: %v\n", d.InvocationID, d.Seq, chunk)
		return nil
	}
	streamActivity := temporal.StreamActivity[string](r, publish, temporal.WithHeartbeat(2*time.Second))
	_ = streamActivity // register it with a worker, as ExampleActivity does
}

// The worker interceptor makes every activity's failure one Temporal
// reads right, activities written by hand included.
func ExampleNewWorkerInterceptor() {
	opts := worker.Options{Interceptors: []interceptor.WorkerInterceptor{temporal.NewWorkerInterceptor()}}
	_ = opts // worker.New(client, "pipeline", opts)
}

func activityOptions(name string) activity.RegisterOptions {
	return activity.RegisterOptions{Name: name}
}

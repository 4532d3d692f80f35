package e2e

import (
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	steadfasttemporal "github.com/steadfast-go/steadfast/adapters/temporal"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// slowCallWorkflow runs the activity "call" with a heartbeat timeout of a
// second, waiting for its cancellation to be acknowledged.
func slowCallWorkflow(ctx workflow.Context, input string) (*oai.ChatCompletion, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		HeartbeatTimeout:    time.Second,
		WaitForCancellation: true,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, BackoffCoefficient: 1},
	})
	var out *oai.ChatCompletion
	err := workflow.ExecuteActivity(ctx, "call", input).Get(ctx, &out)
	return out, err
}

// startSlowCall serves slowCallWorkflow over a chat API that answers after
// silence, and starts it.
func startSlowCall(t *testing.T, silence time.Duration, seen chan<- *http.Request) (client.WorkflowRun, client.Client, *chatAPI) {
	t.Helper()
	api := newChatAPI(t, func(int, http.ResponseWriter) {})
	api.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // as a server does: then it notices a client gone
		api.mu.Lock()
		api.times = append(api.times, time.Now())
		api.mu.Unlock()
		if seen != nil {
			seen <- r
		}
		select {
		case <-time.After(silence):
			completion(w)
		case <-r.Context().Done():
		}
	})
	ts := newServer(t)
	model := openai.NewChat("gpt-test", option.WithBaseURL(api.srv.URL+"/"), option.WithAPIKey("test"))
	r, err := retry.New(model, retry.RetryConfig{MaxRetries: 3, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts.NewWorker(workflowQueue, func(reg worker.Registry) {
		reg.RegisterWorkflowWithOptions(slowCallWorkflow, workflow.RegisterOptions{Name: "slow"})
		reg.RegisterActivityWithOptions(steadfasttemporal.Activity[string, *oai.ChatCompletion](r), activityOptions("call"))
	})
	c := ts.GetDefaultClient()
	run, err := c.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{TaskQueue: workflowQueue}, "slow", "article")
	if err != nil {
		t.Fatal(err)
	}
	return run, c, api
}

// A model silent for three heartbeat timeouts before it answers does not
// trip the heartbeat timeout: the activity heartbeats while the call is
// in flight, and the call is made once, not paid for twice.
func TestSilentModelDoesNotTimeOut(t *testing.T) {
	run, _, api := startSlowCall(t, 3*time.Second, nil)
	var out *oai.ChatCompletion
	if err := run.Get(t.Context(), &out); err != nil || out == nil || len(out.Choices) != 1 || out.Choices[0].Message.Content != "summary" {
		t.Fatalf("workflow = %+v, %v; want the answer", out, err)
	}
	if got := api.requests(); got != 1 {
		t.Errorf("%d requests, want 1", got)
	}
}

// Cancelling the workflow while the call is in flight ends the call
// promptly: the heartbeat learns of the cancellation, the activity's
// context ends, and the request with it; the activity reports a
// cancellation.
func TestCancellationEndsTheCall(t *testing.T) {
	seen := make(chan *http.Request, 1)
	run, c, api := startSlowCall(t, time.Minute, seen)
	var req *http.Request
	select {
	case req = <-seen:
	case <-time.After(30 * time.Second):
		t.Fatal("no request within 30s")
	}
	canceled := time.Now()
	if err := c.CancelWorkflow(t.Context(), run.GetID(), run.GetRunID()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-req.Context().Done():
		t.Logf("request ended %v after the cancellation", time.Since(canceled).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("the request was still open 5s after the workflow was cancelled")
	}
	err := run.Get(t.Context(), nil)
	var ce *temporal.CanceledError
	if !errors.As(err, &ce) {
		t.Errorf("workflow error = %v, want a cancellation", err)
	}
	if got := api.requests(); got != 1 {
		t.Errorf("%d requests, want 1: a cancelled call is not retried", got)
	}
}

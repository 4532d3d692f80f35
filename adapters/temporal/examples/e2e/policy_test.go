package e2e

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	steadfasttemporal "github.com/steadfast-go/steadfast/adapters/temporal"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// chatAPI is an OpenAI chat completions API answering every request with
// answer, and counting the requests.
type chatAPI struct {
	srv    *httptest.Server
	mu     sync.Mutex
	times  []time.Time
	answer func(n int, w http.ResponseWriter)
}

func newChatAPI(t *testing.T, answer func(n int, w http.ResponseWriter)) *chatAPI {
	a := &chatAPI{answer: answer}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.times = append(a.times, time.Now())
		n := len(a.times)
		a.mu.Unlock()
		a.answer(n, w)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *chatAPI) requests() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.times)
}

func apiError(w http.ResponseWriter, status int, code string, header ...string) {
	for i := 0; i+1 < len(header); i += 2 {
		w.Header().Set(header[i], header[i+1])
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"error":{"message":"scripted","type":"` + code + `","code":"` + code + `"}}`))
}

func completion(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"id":"c1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"summary"}}]}`))
}

// callWorkflow runs the activity "call" with unlimited activity attempts.
func callWorkflow(ctx workflow.Context, input string) (*oai.ChatCompletion, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		HeartbeatTimeout:    5 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, BackoffCoefficient: 1},
	})
	var out *oai.ChatCompletion
	err := workflow.ExecuteActivity(ctx, "call", input).Get(ctx, &out)
	return out, err
}

// startCall starts a worker serving callWorkflow and the activity "call"
// (a chat completion through the retry layer, MaxRetries 3), and runs the
// workflow.
func startCall(t *testing.T, api *chatAPI, policy retry.RetryConfig, opts ...steadfasttemporal.Option) (client.WorkflowRun, client.Client) {
	t.Helper()
	ts := newServer(t)
	model := openai.NewChat("gpt-test", option.WithBaseURL(api.srv.URL+"/"), option.WithAPIKey("test"))
	r, err := retry.New(model, policy)
	if err != nil {
		t.Fatal(err)
	}
	ts.NewWorker(workflowQueue, func(reg worker.Registry) {
		reg.RegisterWorkflowWithOptions(callWorkflow, workflow.RegisterOptions{Name: "call"})
		reg.RegisterActivityWithOptions(steadfasttemporal.Activity[string, *oai.ChatCompletion](r, opts...), activityOptions("call"))
	})
	c := ts.GetDefaultClient()
	run, err := c.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{TaskQueue: workflowQueue}, "call", "article")
	if err != nil {
		t.Fatal(err)
	}
	return run, c
}

// activityFailure returns the ApplicationError behind a workflow's failed
// activity, and the attempts Temporal made.
func activityFailure(t *testing.T, err error) *temporal.ApplicationError {
	t.Helper()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		t.Fatalf("workflow error = %v, want an activity's ApplicationError", err)
	}
	return app
}

// A provider that always answers 503, under a RetryPolicy with unlimited
// attempts, sees exactly MaxRetries+1 requests across in-activity and
// activity retries: here every backoff is handed to Temporal, so each
// request is an activity attempt of its own, and the last fails
// NonRetryable.
func TestNoAmplification(t *testing.T) {
	api := newChatAPI(t, func(_ int, w http.ResponseWriter) { apiError(w, 503, "overloaded") })
	policy := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}
	run, _ := startCall(t, api, policy, steadfasttemporal.WithHandOff(time.Millisecond))
	err := run.Get(t.Context(), nil)
	app := activityFailure(t, err)
	if !app.NonRetryable() {
		t.Errorf("final failure %v is retryable, want NonRetryable once the attempts are spent", app)
	}
	if got := api.requests(); got != 4 {
		t.Errorf("provider saw %d requests, want MaxRetries+1 = 4", got)
	}
	// The same without hand-offs: the retries are slept in one activity
	// attempt.
	api2 := newChatAPI(t, func(_ int, w http.ResponseWriter) { apiError(w, 503, "overloaded") })
	if run, _ := startCall(t, api2, policy); run.Get(t.Context(), nil) == nil {
		t.Fatal("workflow succeeded")
	}
	if got := api2.requests(); got != 4 {
		t.Errorf("without hand-offs the provider saw %d requests, want 4", got)
	}
}

// A 429 with a 60s Retry-After ends the activity attempt at once: the
// worker does not sleep it, Temporal schedules the next attempt about 60s
// later, and meanwhile the worker's one activity slot is free.
func TestLongHintIsSleptByTemporal(t *testing.T) {
	api := newChatAPI(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			apiError(w, 429, "rate_limit_exceeded", "Retry-After", "60")
			return
		}
		completion(w)
	})
	policy := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, MaxRetryAfter: 2 * time.Minute}
	start := time.Now()
	run, c := startCall(t, api, policy)
	var desc *time.Time
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && desc == nil {
		d, err := c.DescribeWorkflowExecution(t.Context(), run.GetID(), run.GetRunID())
		if err != nil {
			t.Fatal(err)
		}
		for _, pa := range d.GetPendingActivities() {
			if pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED && pa.GetAttempt() == 2 && pa.GetNextAttemptScheduleTime() != nil {
				at := pa.GetNextAttemptScheduleTime().AsTime()
				desc = &at
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if desc == nil {
		t.Fatal("no second activity attempt scheduled within 20s")
	}
	if wait := desc.Sub(start); wait < 55*time.Second || wait > 65*time.Second {
		t.Errorf("next activity attempt at +%v, want about +60s (the hint)", wait.Round(time.Second))
	}
	if got := api.requests(); got != 1 {
		t.Errorf("%d requests before the hint's end, want 1", got)
	}
	_ = c.TerminateWorkflow(t.Context(), run.GetID(), run.GetRunID(), "test over")
}

// Permanent failures (a context-length 400, an exhausted quota's 429)
// fail the workflow's activity at once, NonRetryable, with the API's code
// as the type.
func TestPermanentFailuresFailAtOnce(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
	}{{400, "context_length_exceeded"}, {429, "insufficient_quota"}} {
		t.Run(tc.code, func(t *testing.T) {
			api := newChatAPI(t, func(_ int, w http.ResponseWriter) { apiError(w, tc.status, tc.code) })
			run, _ := startCall(t, api, retry.DefaultRetryConfig())
			err := run.Get(t.Context(), nil)
			app := activityFailure(t, err)
			if !app.NonRetryable() || app.Type() != tc.code {
				t.Errorf("failure type %q, NonRetryable %v; want %q, true", app.Type(), app.NonRetryable(), tc.code)
			}
			if got := api.requests(); got != 1 {
				t.Errorf("%d requests, want 1", got)
			}
		})
	}
}

package temporal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/steadfast-go/steadfast/adapters/temporal"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// provider answers each request with the next of its answers (an error,
// or an output), the last one for ever after, and records the attempts
// the retry layer made.
type provider struct {
	mu       sync.Mutex
	answers  []any
	requests []retry.AttemptInfo
}

func (p *provider) Invoke(ctx context.Context, _ any, _ ...core.Option) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	info, _ := retry.AttemptFromContext(ctx)
	p.requests = append(p.requests, info)
	a := p.answers[min(len(p.requests), len(p.answers))-1]
	if err, ok := a.(error); ok {
		return nil, err
	}
	return a, nil
}

func (p *provider) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(p.Invoke).Batch(ctx, in, opts...)
}

func (p *provider) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return nil, errors.New("provider: no streams")
}

// fastRetry retries 3 times (4 attempts in all), 1ms apart.
func fastRetry(t *testing.T, inner core.Runnable) *retry.RetryRunnable {
	t.Helper()
	r, err := retry.New(inner, retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// activityRuns runs an activity as Temporal runs its attempts: each
// attempt is given the heartbeat details the one before recorded last.
type activityRuns struct {
	t       *testing.T
	suite   testsuite.WorkflowTestSuite
	details converter.EncodedValues
	beats   int // heartbeats sent (the SDK throttles them)
	// recorded counts the activity's RecordHeartbeat calls.
	recorded atomic.Int64
	// first is the details of the first RecordHeartbeat call, as JSON.
	first atomic.Value
}

// beatCounter counts an activity's RecordHeartbeat calls and keeps the
// first one's details.
type beatCounter struct {
	interceptor.WorkerInterceptorBase
	runs *activityRuns
}

func (b *beatCounter) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &beatInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, runs: b.runs}
}

type beatInbound struct {
	interceptor.ActivityInboundInterceptorBase
	runs *activityRuns
}

func (b *beatInbound) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	return b.Next.Init(&beatOutbound{ActivityOutboundInterceptorBase: interceptor.ActivityOutboundInterceptorBase{Next: outbound}, runs: b.runs})
}

type beatOutbound struct {
	interceptor.ActivityOutboundInterceptorBase
	runs *activityRuns
}

func (b *beatOutbound) RecordHeartbeat(ctx context.Context, details ...any) {
	if b.runs.recorded.Add(1) == 1 {
		first, err := json.Marshal(details)
		if err != nil {
			b.runs.t.Errorf("heartbeat details: %v", err)
		}
		b.runs.first.Store(string(first))
	}
	b.Next.RecordHeartbeat(ctx, details...)
}

// run runs one activity attempt of fn with its arguments.
func (a *activityRuns) run(fn any, args ...any) (converter.EncodedValue, error) {
	a.suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := a.suite.NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&beatCounter{runs: a}}})
	if a.details != nil {
		var cp map[string]any
		if err := a.details.Get(&cp); err != nil {
			a.t.Fatalf("heartbeat details: %v", err)
		}
		env.SetHeartbeatDetails(cp)
	}
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		a.details = d
		a.beats++
	})
	env.RegisterActivity(fn)
	return env.ExecuteActivity(fn, args...)
}

func applicationError(t *testing.T, err error) *sdktemporal.ApplicationError {
	t.Helper()
	var app *sdktemporal.ApplicationError
	if !errors.As(err, &app) {
		t.Fatalf("error = %T %v, want an ApplicationError", err, err)
	}
	return app
}

func TestActivityReturnsTheOutput(t *testing.T) {
	p := &provider{answers: []any{apiError(503, "", 0), "summary"}}
	runs := &activityRuns{t: t}
	v, err := runs.run(temporal.Activity[string, string](fastRetry(t, p)), "article")
	if err != nil {
		t.Fatalf("error = %v", err)
	}
	var got string
	if err := v.Get(&got); err != nil || got != "summary" {
		t.Errorf("output = %q, %v; want summary", got, err)
	}
	if len(p.requests) != 2 {
		t.Errorf("%d requests, want 2 (a 503, then the answer)", len(p.requests))
	}
}

// A provider that always answers 503 sees MaxRetries+1 requests in all,
// however many times Temporal runs the activity again: the attempts are
// carried in the heartbeat details, and once they are spent the failure
// is NonRetryable. The InvocationID is the same in every attempt.
func TestActivityNoAmplification(t *testing.T) {
	p := &provider{answers: []any{apiError(503, "", 0)}}
	fn := temporal.Activity[string, string](fastRetry(t, p), temporal.WithHandOff(time.Nanosecond))
	runs := &activityRuns{t: t}
	for attempt := 1; attempt <= 10; attempt++ {
		_, err := runs.run(fn, "article")
		app := applicationError(t, err)
		if app.NonRetryable() {
			break
		}
		if attempt == 10 {
			t.Fatalf("still retryable after 10 activity attempts: %v", err)
		}
	}
	if len(p.requests) != 4 {
		t.Errorf("%d requests in all, want MaxRetries+1 = 4", len(p.requests))
	}
	for i, info := range p.requests {
		if info.Attempt != i+1 || info.InvocationID != p.requests[0].InvocationID {
			t.Errorf("request %d: attempt %d, InvocationID %q; want %d and the first's %q", i, info.Attempt, info.InvocationID, i+1, p.requests[0].InvocationID)
		}
	}
}

// A server's hint longer than the hand-off ends the activity attempt at
// once: the worker does not sleep it, Temporal does, as NextRetryDelay.
func TestActivityHandsOffALongHint(t *testing.T) {
	p := &provider{answers: []any{apiError(429, "rate_limit_exceeded", 60*time.Second), "summary"}}
	runs := &activityRuns{t: t}
	start := time.Now()
	_, err := runs.run(temporal.Activity[string, string](fastRetry(t, p)), "article")
	app := applicationError(t, err)
	if app.NonRetryable() || app.NextRetryDelay() != 60*time.Second || app.Type() != "rate_limit_exceeded" {
		t.Errorf("NonRetryable %v, NextRetryDelay %v, type %q; want false, 60s, rate_limit_exceeded", app.NonRetryable(), app.NextRetryDelay(), app.Type())
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the activity attempt took %v, want it to end at once", took)
	}
	// The next activity attempt continues the call: attempt 2 succeeds.
	if _, err := runs.run(temporal.Activity[string, string](fastRetry(t, p)), "article"); err != nil {
		t.Fatalf("next activity attempt: %v", err)
	}
	if len(p.requests) != 2 || p.requests[1].Attempt != 2 {
		t.Errorf("requests %+v, want the second to be attempt 2", p.requests)
	}
}

// Permanent failures fail the activity at once, NonRetryable, with the
// API's code as the type.
func TestActivityPermanentFailures(t *testing.T) {
	for _, code := range []struct {
		status int
		code   string
	}{{400, "context_length_exceeded"}, {429, "insufficient_quota"}} {
		p := &provider{answers: []any{verdict(code.status, code.code)}}
		runs := &activityRuns{t: t}
		_, err := runs.run(temporal.Activity[string, string](fastRetry(t, p)), "article")
		app := applicationError(t, err)
		if !app.NonRetryable() || app.Type() != code.code || len(p.requests) != 1 {
			t.Errorf("%d %s: NonRetryable %v, type %q, %d requests; want true, %q, 1", code.status, code.code, app.NonRetryable(), app.Type(), len(p.requests), code.code)
		}
	}
}

// A silent provider (a model before its first token) does not trip the
// heartbeat timeout: the activity heartbeats while the call is in flight.
func TestActivityHeartbeatsWhileInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
			select {
			case <-time.After(30 * time.Second): // silent for three heartbeat timeouts
				return "late", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
		runs := &activityRuns{t: t}
		if _, err := runs.run(temporal.Activity[string, string](fastRetry(t, slow), temporal.WithHeartbeat(5*time.Second)), "q"); err != nil {
			t.Fatal(err)
		}
		// One as the attempt starts, then one every 5s.
		if n := runs.recorded.Load(); n < 6 {
			t.Errorf("%d heartbeats in 30s at one every 5s, want at least 6", n)
		}
	})
}

func TestActivityBadArguments(t *testing.T) {
	for name, fn := range map[string]func(context.Context, string) (string, error){
		"nil Runnable":   temporal.Activity[string, string](nil),
		"bad hand-off":   temporal.Activity[string, string](&provider{}, temporal.WithHandOff(-time.Second)),
		"bad heartbeat":  temporal.Activity[string, string](&provider{}, temporal.WithHeartbeat(0)),
		"nil Option":     temporal.Activity[string, string](&provider{}, nil),
		"wrong out type": temporal.Activity[string, string](&provider{answers: []any{42}}),
	} {
		t.Run(name, func(t *testing.T) {
			runs := &activityRuns{t: t}
			_, err := runs.run(fn, "q")
			if app := applicationError(t, err); !app.NonRetryable() {
				t.Errorf("%v: want NonRetryable", err)
			}
		})
	}
	// Outside an activity: an error, not the SDK's panic.
	if _, err := temporal.Activity[string, string](&provider{answers: []any{"x"}})(t.Context(), "q"); err == nil {
		t.Error("called outside an activity: error = nil")
	}
}

// Heartbeat details this package did not write stop the activity with an
// error naming them, rather than start the call's attempts again.
func TestActivityForeignCheckpoint(t *testing.T) {
	p := &provider{answers: []any{"summary"}}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestActivityEnvironment()
	env.SetHeartbeatDetails("progress: 40 %")
	fn := temporal.Activity[string, string](fastRetry(t, p))
	env.RegisterActivity(fn)
	_, err := env.ExecuteActivity(fn, "article")
	if app := applicationError(t, err); !app.NonRetryable() || app.Type() != "steadfast_checkpoint" || len(p.requests) != 0 {
		t.Errorf("%v with %d requests, want NonRetryable steadfast_checkpoint and none", err, len(p.requests))
	}
}

// lockedLog is a log the SDK's goroutines write to.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

// When WithHeartbeat and the activity's HeartbeatTimeout disagree (the
// SDK will not send heartbeats as often as set, or they come too late for
// the timeout), the worker's log says so once, however many activity
// attempts run; at the default, it says nothing.
func TestHeartbeatAdviceIsLoggedOnce(t *testing.T) {
	for name, tc := range map[string]struct {
		opts []temporal.Option
		want string
	}{
		"more often than the throttle": {[]temporal.Option{temporal.WithHeartbeat(time.Second)}, "more often than the SDK sends them (at most every 1.6s"},
		"not before the timeout":       {[]temporal.Option{temporal.WithHeartbeat(3 * time.Second)}, "not shorter than the activity's HeartbeatTimeout (2s)"},
		"the default":                  {nil, ""},
	} {
		logged := &lockedLog{}
		var suite testsuite.WorkflowTestSuite
		suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(logged, nil))))
		env := suite.NewTestWorkflowEnvironment()
		fn := temporal.Activity[string, string](fastRetry(t, &provider{answers: []any{"ok"}}), tc.opts...)
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: "answer"})
		env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
			ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, HeartbeatTimeout: 2 * time.Second})
			for range 3 {
				if err := workflow.ExecuteActivity(ctx, "answer", "q").Get(ctx, nil); err != nil {
					return err
				}
			}
			return nil
		}, workflow.RegisterOptions{Name: "three"})
		env.ExecuteWorkflow("three")
		if err := env.GetWorkflowError(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch n := logged.count("steadfast: WithHeartbeat"); {
		case tc.want == "" && n != 0:
			t.Errorf("%s: %d heartbeat advices logged, want none", name, n)
		case tc.want != "" && (n != 1 || logged.count(tc.want) != 1):
			t.Errorf("%s: %d heartbeat advices logged, want one saying %q; the log:\n%s", name, n, tc.want, logged.buf.String())
		}
	}
}

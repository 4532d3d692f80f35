package temporal

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"

	"github.com/steadfast-go/steadfast/retry"
)

// NewWorkerInterceptor returns a worker interceptor that applies
// ToApplicationError to the error of every activity, so that activities
// written by hand (calling a RetryRunnable themselves) fail as Temporal
// should see it. Each such activity's context also continues one call
// across its activity attempts, with the same InvocationID in every one
// and WithHandOff's bound on the waits slept in the worker (the attempts
// made are carried only by Activity and StreamActivity, which own the
// heartbeat details). A bad Option makes every activity fail NonRetryable
// with an error naming it. Add it to worker.Options.Interceptors.
func NewWorkerInterceptor(opts ...Option) interceptor.WorkerInterceptor {
	return &workerInterceptor{o: newOptions(opts)}
}

type workerInterceptor struct {
	interceptor.WorkerInterceptorBase
	o options
}

func (w *workerInterceptor) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	a := &activityInterceptor{o: &w.o}
	a.Next = next
	return a
}

type activityInterceptor struct {
	interceptor.ActivityInboundInterceptorBase
	o *options
}

func (a *activityInterceptor) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if a.o.err != nil {
		return nil, permanent("steadfast_config", a.o.err)
	}
	ctx = retry.WithContinuation(ctx, retry.Continuation{
		InvocationID: invocationID(activity.GetInfo(ctx)),
		HandOff:      a.o.handOff,
	})
	out, err := a.Next.ExecuteActivity(ctx, in)
	return out, ToApplicationError(err)
}

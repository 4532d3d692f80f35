package temporal

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// Activity returns an activity function that calls r's Invoke with its
// input and returns the output as an Out. Register it with a worker.
//
// Its failures are ToApplicationError's. Attempts are counted across
// activity attempts: each one continues the same call (retry.Continuation)
// with the attempts made before, read from the heartbeat details, and the
// same InvocationID (the workflow's ID and run ID and the activity's ID),
// so a call makes at most MaxRetries+1 attempts in all, and a tool retried
// after a worker crash sees the same idempotency key. A wait before a
// retry longer than WithHandOff ends the activity attempt, NextRetryDelay
// set to it. While the call is in flight the activity heartbeats (see
// WithHeartbeat), and Temporal's cancellation of the activity ends the
// call.
//
// r must be a *retry.RetryRunnable, or a chain with one outside, for the
// attempts to be counted across activity attempts; any Runnable works
// otherwise, its failures classified by ToApplicationError. A nil r, a bad
// Option, or an output that is not an Out is a NonRetryable error of type
// "steadfast_config" or "steadfast_output"; heartbeat details this package
// did not write, one of type "steadfast_checkpoint".
func Activity[In, Out any](r core.Runnable, opts ...Option) func(context.Context, In) (Out, error) {
	o := newOptions(opts)
	if r == nil && o.err == nil {
		o.err = errors.New("temporal: Activity: nil Runnable")
	}
	return func(ctx context.Context, in In) (Out, error) {
		var zero Out
		ctx, hb, err := begin(ctx, &o, false)
		if err != nil {
			return zero, err
		}
		defer hb.stop()
		out, err := r.Invoke(ctx, in)
		if err != nil {
			return zero, ToApplicationError(err)
		}
		if out == nil {
			return zero, nil
		}
		v, ok := out.(Out)
		if !ok {
			return zero, permanent("steadfast_output", fmt.Errorf("temporal: Activity: the Runnable's output is %T, want %T", out, zero))
		}
		return v, nil
	}
}

// begin starts an activity attempt: it reads the checkpoint, starts the
// heartbeats and returns the context that continues the call.
func begin(ctx context.Context, o *options, stream bool) (context.Context, *heartbeat, error) {
	if o.err != nil {
		return ctx, nil, permanent("steadfast_config", o.err)
	}
	if !activity.IsActivity(ctx) {
		return ctx, nil, permanent("steadfast_config", errors.New("temporal: not called in an activity: register the function with a Temporal worker"))
	}
	cp, err := readCheckpoint(ctx)
	if err != nil {
		// Details this package did not write: starting afresh would make
		// the call's attempts again, so the activity says why it stops.
		return ctx, nil, permanent("steadfast_checkpoint", fmt.Errorf("temporal: the heartbeat details are not a checkpoint of this package: %w", err))
	}
	info := activity.GetInfo(ctx)
	o.adviseOnce(ctx, info.HeartbeatTimeout)
	hb := startHeartbeat(ctx, cp, o.every(info.HeartbeatTimeout), stream)
	ctx = retry.WithContinuation(ctx, retry.Continuation{
		InvocationID: invocationID(info),
		Attempts:     cp.Attempts,
		HandOff:      o.handOff,
		OnAttempt:    hb.attempted,
	})
	return ctx, hb, nil
}

// invocationID is the same in every attempt of one activity, on any
// worker: the workflow's ID and run ID, and the activity's ID.
func invocationID(info activity.Info) string {
	return info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID + "/" + info.ActivityID
}

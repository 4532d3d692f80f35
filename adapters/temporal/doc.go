// Package temporal runs steadfast Runnables in Temporal activities, so that
// the retry layer and Temporal's own retries make one policy rather than
// two that multiply, and a stream broken by a dead worker resumes on
// another where it broke.
//
// Used naively, each layer hides from the other what it needs: Temporal
// reads only the error an activity returns (a *retry.Error is one more
// retryable failure, even for a 400 or an exhausted quota); a long server
// hint is slept in the worker, holding its slot; in-activity retries
// multiply with activity retries; and a stream retried from scratch
// delivers its chunks twice. This package bridges them:
//
//   - [ToApplicationError] turns a failure into a
//     *temporal.ApplicationError whose type is the failure's error.type
//     (retry.ErrorType: a provider's API code such as
//     "insufficient_quota", else the status), NonRetryable when no retry
//     can help (a failure the retry layer classified permanent, or a call
//     whose attempts are spent), with the server's hint as NextRetryDelay
//     and the failure kept as its cause. [NewWorkerInterceptor] applies it
//     to every activity's error.
//   - [Activity] runs a Runnable's Invoke as an activity with one
//     allowance of attempts across both layers: the attempts made are
//     kept in the activity's heartbeat details, every activity attempt
//     continues the same call (the same InvocationID, derived from the
//     workflow and activity), a wait longer than [WithHandOff] ends the
//     activity attempt and lets Temporal sleep it, and the activity
//     heartbeats while a call is in flight (a model silent before its
//     first token does not trip the heartbeat timeout).
//   - [StreamActivity] runs a Stream, hands each chunk to a deliver
//     function, and checkpoints after each the last chunk and the call's
//     state (what Resume needs): the next activity attempt, on any worker,
//     resumes after the last checkpointed chunk.
//
// Set the activity's RetryPolicy for what the retry layer leaves to
// Temporal: unlimited MaximumAttempts is safe (the call's attempts are
// bounded by its RetryConfig.MaxRetries and end NonRetryable), an
// InitialInterval as short as the retry layer's InitialBackoff, and a
// HeartbeatTimeout, which is how Temporal notices a dead worker.
package temporal

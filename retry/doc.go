// Package retry wraps a core.Runnable in a RetryRunnable that retries its
// transient failures, never what must not be retried, and tells
// OpenTelemetry about every attempt and every backoff.
//
// A call (Invoke, Batch or Stream) makes attempts until one succeeds, an
// error is classified as permanent, the policy's MaxRetries are spent, the
// Budget refuses, a server's Retry-After hint exceeds MaxRetryAfter, or the
// caller's context ends. Between attempts it sleeps
//
//	min(MaxBackoff, InitialBackoff × BackoffFactor^(retry−1)) × (1 − Jitter × U[0,1))
//
// or exactly the server's RetryAfter() hint, and never into the caller's
// deadline. Every failure is an *Error with the attempts made, the Outcome
// and the last error. Policies are plain data (RetryConfig), per operation
// (WithOperationConfig) and in JSON files (ParsePolicies).
//
// After a failed attempt the first rule that applies decides:
//
//  1. the caller's context is done: stop (canceled or deadline);
//  2. an error in the chain with a Retryable() bool method: its verdict
//     (Permanent says no);
//  3. RetryConfig.RetryIf, when set;
//  4. RetryConfig.RetryableErrors, when non-empty: retry only a match;
//  5. a StatusCode() or HTTPStatusCode(): 408, 409, 425, 429 and 5xx
//     retry, any other 4xx stops;
//  6. the attempt's own PerAttemptTimeout (ErrAttemptTimeout): retry;
//  7. network timeouts, resets, refusals, io.ErrUnexpectedEOF: retry;
//  8. anything else: retry.
//
// A Runnable whose Idempotent() is false is never retried unless its policy
// sets RetryNonIdempotent. RecommendedBudget, shared by the RetryRunnables
// that call one provider, keeps retries from turning an overload into a
// storm. The README has the rest: batches, streams, output checks,
// telemetry names and the bench figures.
//
//	budget := retry.RecommendedBudget() // one per provider, shared
//	r, err := retry.New(llm, retry.DefaultRetryConfig(), retry.WithBudget(budget))
//	out, err := r.Invoke(ctx, prompt, core.WithOperation("llm.chat"))
package retry

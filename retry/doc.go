// Package retry wraps a core.Runnable in a RetryRunnable that retries its
// transient failures, never what must not be retried, and tells
// OpenTelemetry about every attempt and every backoff.
//
// # The model
//
// A call (Invoke, Batch or Stream) makes attempts until one succeeds, an
// error is classified as permanent, the policy's MaxRetries are spent, the
// retry budget refuses, a server's Retry-After hint exceeds MaxRetryAfter,
// or the caller's context ends. Between attempts it sleeps
//
//	min(MaxBackoff, InitialBackoff × BackoffFactor^(retry−1)) × (1 − Jitter × U[0,1))
//
// or exactly the server's RetryAfter() hint, and it never sleeps into the
// caller's deadline: when the next attempt could not start before it, the
// call ends at once. Every failure is an *Error carrying the attempts made,
// the Outcome and the last error.
//
// # Defaults
//
// DefaultRetryConfig: 3 retries, 1s doubling to 30s, 10% jitter, hints up
// to 60s honoured. Policies can differ per operation (WithOperationConfig,
// ParsePolicies) and live in JSON files.
//
// # What is retried
//
// After a failed attempt, the first rule that applies decides (other docs
// cite them by number):
//
//  1. The caller's context is done: stop (outcome canceled or deadline).
//  2. An error in the chain with a Retryable() bool method: its verdict.
//     Permanent says no; so do breaker.OpenError and core.PanicError.
//  3. RetryConfig.RetryIf, when set: its verdict.
//  4. RetryConfig.RetryableErrors, when non-empty: retry only a match
//     (errors.Is).
//  5. An error with StatusCode() or HTTPStatusCode(): 408, 409, 425, 429
//     and 5xx retry; any other 4xx stops.
//  6. The attempt ran out of its own PerAttemptTimeout (ErrAttemptTimeout):
//     retry.
//  7. Network timeouts, connection resets and refusals, io.ErrUnexpectedEOF:
//     retry.
//  8. Anything else: retry.
//
// Before rules 2 to 8, the idempotency guard: a Runnable whose Idempotent()
// is false is never retried unless its policy sets RetryNonIdempotent. A
// failure that may be retried is then charged to the budget; the call stops
// if its attempts are spent (exhausted), if the server's RetryAfter() hint
// exceeds MaxRetryAfter (retry_after_too_long), if the delay would pass the
// caller's deadline (deadline), or if the budget refuses (budget_exhausted),
// in that order.
//
// # Bad answers
//
// RetryConfig.CheckOutput makes an answer that came back without an error
// but is not usable (truncated, empty, not the JSON asked for) a failed
// attempt, classified like any other but never charged to the budget;
// RetryConfig.NextInput rewrites the next attempt's input, to tell the
// model what was wrong. Invoke and each Batch item are checked; a Stream's
// chunks are delivered as they come and are not.
//
// # Batch and Stream
//
// Batch re-sends only the failed, retryable items of a *core.BatchError.
// Stream retries until its first chunk is delivered, and never after.
//
// # Telemetry
//
// Call spans retry.invoke, retry.batch and retry.stream, one retry.attempt
// span per attempt, a retry.backoff event per backoff, and the metrics
// retry.attempts, retry.calls, retry.backoff.duration and
// retry.budget.refused, from the providers given with WithTracerProvider and
// WithMeterProvider or else the global ones. Attributes are prebuilt for up
// to 1024 distinct operations per RetryRunnable; further operations cost a
// few allocations per call and no lasting memory. Nothing is logged unless
// WithLogger is given, and then one WARN record per failed call.
//
// # Concurrency
//
// A RetryRunnable and a Budget are safe for concurrent use. Invoke and Batch
// start no goroutine of their own and stop every timer they start; Stream
// starts one, which ends when the stream ends or its context is done.
//
// Hooks (WithOnRetry), the Budget and the logger run on the goroutine making
// the attempts: the caller's for Invoke, Batch and a Stream's first
// creation; the stream's forwarding goroutine for the retries of a Stream
// after its creation.
//
// # Panics
//
// One policy for all three methods. A panic of the inner Runnable, a hook,
// the Budget or the logger on the caller's goroutine propagates to the
// caller with its value unchanged, after the call and attempt spans are
// ended (status Error, error.type "panic") and the attempt's context and
// timers are released. A panic on the stream's forwarding goroutine, where
// no caller could recover it, is recovered: the stream ends with an *Error
// (outcome not_retryable, or committed after the first chunk) wrapping a
// *core.PanicError that carries the panic value and stack, as its last
// value. A panic after the last value was delivered (in the logger, say)
// cannot be delivered and is dropped.
//
// # Usage
//
//	budget := retry.RecommendedBudget() // one per provider, shared
//	r, err := retry.New(llm, retry.DefaultRetryConfig(), retry.WithBudget(budget))
//	out, err := r.Invoke(ctx, prompt, core.WithOperation("llm.chat"))
package retry

// Package retry wraps a core.Runnable in a RetryRunnable that retries its
// transient failures, never what must not be retried, and tells
// OpenTelemetry about every attempt and every backoff.
//
//	budget := retry.RecommendedBudget() // one per provider, shared
//	r, err := retry.New(llm, retry.DefaultRetryConfig(), retry.WithBudget(budget))
//	out, err := r.Invoke(ctx, prompt, core.WithOperation("llm.chat"))
//
// A call (Invoke, Batch or Stream) makes attempts until one succeeds
// (outcome success in telemetry) or one of these stops it, its Outcome on
// the *Error: an error classified as permanent (OutcomeNotRetryable); the policy's
// MaxRetries, or its MaxRetriesByClass bound for the failure's Class,
// spent (OutcomeExhausted); MaxRetryTokens thrown away
// (OutcomeRetryTokensExhausted); the Budget refusing
// (OutcomeBudgetExhausted); a server's Retry-After hint over
// MaxRetryAfter (OutcomeRetryAfterTooLong); the caller's context ending,
// or a next wait that would end after its deadline (OutcomeCanceled,
// OutcomeDeadline); a stream that broke after its first chunk with no
// resume or restart (OutcomeCommitted); a broken route's turn ending
// inside a fallback (OutcomeSilentTimeout or OutcomeExhausted, under
// Failover below); or a next wait longer than a Continuation's HandOff
// (OutcomeHandedOff: its caller sleeps Error.Wait and continues it).
// Between attempts it sleeps
//
//	min(MaxBackoff, InitialBackoff × BackoffFactor^(retry−1)) × (1 − Jitter × U[0,1))
//
// or exactly the server's RetryAfter() hint, and never into the caller's
// deadline: a backoff that would end after it is not slept, and the call
// returns at once. Every failure is an *Error with the attempts made, the
// Outcome and the last error. Policies are plain data (RetryConfig, whose
// fields document their defaults), per operation (WithOperationConfig) and
// in JSON files (ParsePolicies).
//
// # What is retried
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
// sets RetryNonIdempotent; such a tool deduplicates by the InvocationID of
// AttemptFromContext, the same on every attempt of one call. Other packages
// speak to these rules through methods on their errors (Retryable,
// StatusCode, RetryAfter, ErrorType, Local) without importing this one.
//
// # Repair
//
// A failure that no retry fixes may be fixed by a changed request: a
// context window overflow by a lower output limit or a shorter input.
// RetryConfig.Repair is offered each failure the rules call permanent, and
// a changed input is tried at once: no backoff, no budget token, no retry
// spent, at most MaxRepairs times. llmhttp.ParseOverflow reads an
// overflow; the providers ship repairs that lower the output limit.
//
// # Batches and streams
//
// Batch re-sends only the failed items whose errors are retryable, merged
// by index; each item counts its own attempts. Stream retries until the
// first chunk is delivered (the commit) and never delivers a chunk twice;
// ChunkTimeout ends a stream that stalls after it, and with ResumeStreams
// a Runnable that implements core.Resumer, and whose CanResume says so for
// the call, continues a broken stream after the last chunk delivered.
//
// # Failover
//
// Inside a fallback's candidate with another after it (the fallback marks
// the call's context, as Nested marks an inner layer), a broken route
// ends its turn early so that the next candidate is asked: at its first
// silent attempt or stall (OutcomeSilentTimeout), at its first malformed
// event or Retry-After over a second, or at its second failure in a row
// (OutcomeExhausted). A pool below that can send the next attempt to
// another deployment comes first. Alone, every retry is made.
//
// # Budgets
//
// RecommendedBudget, shared by the RetryRunnables that call one provider,
// runs package budget's law: retries at most at a ratio of recent first
// attempts, paced, and first attempts refused here (client-side adaptive
// throttling) while the provider refuses most requests, so that retries
// never turn an overload into a storm and a collapsed provider recovers.
// NewTokenBudget is gRPC's retry throttling.
//
// # Telemetry
//
// The tracer and meter come from WithTracerProvider and WithMeterProvider,
// else the global providers; the scope is ScopeName. Spans: retry.invoke,
// retry.batch or retry.stream for the call (retry.operation, retry.method,
// retry.max_retries, retry.attempts, retry.outcome, and error.type on
// failure; retry.stream.chunks for a stream; retry.tokens.input,
// retry.tokens.output and retry.tokens.discarded when the Runnable reports
// usage; retry.nested, the depth of a layer called inside another's
// attempt) and a retry.attempt child per attempt (retry.attempt; on
// failure error.type, retry.retryable and retry.class, and, when a backoff
// follows, retry.backoff in seconds and retry.backoff.source: computed,
// retry_after or budget; retry.batch.items for a Batch round,
// retry.stream.resumed for a Resume, retry.restarted for a restart
// (RestartStreams), retry.repaired for an attempt made with the input
// Repair returned); events retry.backoff, retry.repair and
// retry.output_repair (repair.rung: local or reask) on the call span. A
// Runnable with a CallAttributes() []attribute.KeyValue method, found
// through any Unwrap() core.Runnable chain, puts those attributes (the
// GenAI conventions' gen_ai.provider.name and gen_ai.request.model, say)
// on the span of every call to it. Metrics: retry.attempts and
// retry.calls (counters), retry.backoff.duration (histogram, seconds),
// retry.budget.refused (counter; reason throttled for a first attempt,
// retry_budget for a retry), for a budget that says it, retry.budget.throttle (gauge),
// retry.tokens (counter), and the durations retry.call.duration,
// retry.call.attempts, retry.call.delay, retry.attempt.duration and
// retry.attempt.time_to_first_chunk (histograms), with the attributes
// retry.operation, retry.method, retry.outcome, error.type, reason and
// retry.token.fate only. WithGenAIConventions adds the GenAI conventions'
// inference span and metrics for each request a provider adapter sends.
// docs/telemetry.md lists every name. Inputs, outputs and prompts are
// never recorded.
package retry

// Package steadfast is retry middleware for AI pipelines in Go.
//
// An LLM, a retriever, a tool or a whole chain is a core.Runnable (Invoke,
// Batch, Stream). retry.New wraps one in a retry.RetryRunnable, which retries
// transient failures (429, 503, timeouts, broken connections) with capped
// exponential backoff and jitter, stops at once on failures that will never
// succeed (400, 401, retry.Permanent), honours the caller's context and the
// server's Retry-After hints, and records every attempt and every backoff in
// OpenTelemetry spans and metrics.
//
//	llm, err := retry.New(myLLM, retry.DefaultRetryConfig())
//	out, err := llm.Invoke(ctx, prompt, core.WithOperation("llm.chat"))
//
// The packages (doc_test.go holds this list to the repository's):
//
//   - core: the Runnable contract, RunnableFunc, call options, Chain and
//     the State a call's decorators share.
//   - retry: RetryRunnable, RetryConfig and its JSON policy files,
//     classification, the retry budget and telemetry.
//   - budget: the load law retry.RecommendedBudget runs, how many of a
//     call's attempts go to a provider that is failing.
//   - ratelimit: a token-bucket decorator over golang.org/x/time/rate, and
//     a concurrency limit that adapts to the provider's load.
//   - breaker: a circuit-breaker decorator over sony/gobreaker, opened by
//     failures or by a slow-call rate.
//   - fallback: the next of several Runnables when one cannot serve now.
//   - hedge: a second request when the first is slow; first answer wins.
//   - pool: one model served by many deployments, scored by speed,
//     outliers ejected, session affinity, dead keys routed around, and
//     calls held for the provider's reset when no key has room.
//   - route: a call's constraints (tags required or excluded, an order, no
//     fallback, a highest price) over the tagged candidates of a pool and
//     a fallback.
//   - repair: an LLM's answer fixed in place before a retry pays for
//     another (JSON, a tool name).
//   - chaos: the failures LLM providers have, injected into a pipeline's
//     own tests and staging.
//   - llmhttp: what the provider adapters share, for writing one of your
//     own: the adapter error and Classify, the pump from an SDK stream to
//     a Runnable's stream, usage and the inference on the span, and the
//     provider's rate-limit headers, by which ratelimit and pool pace calls.
//   - providers/openai, providers/anthropic, providers/gemini (modules of
//     their own): the official LLM SDKs as Runnables that return their
//     full responses, with error adapters and ready-made answer checks.
//   - adapters/eino, adapters/langchaingo, adapters/genkit, adapters/adk
//     (modules of their own): the Go AI frameworks' models and tools as
//     Runnables, and back.
//   - adapters/mcp (a module of its own): the tools of an MCP server as
//     Runnables, retried only when that is safe.
//   - adapters/temporal (a module of its own): Runnables as Temporal
//     activities, one retry policy across both layers, streams that resume
//     on another worker.
//   - fleet (a module of its own): a retry budget, a ratelimit backend and
//     a concurrency limit kept in Redis, shared by every replica that
//     calls one provider.
//
// Compose them retry outermost:
//
//	r := core.Chain(llm, retry.Middleware(cfg), breaker.Middleware(st), ratelimit.Middleware(ratelimit.InProcess(lim)))
//
// Panics: on the caller's goroutine, a panic of the wrapped Runnable or of a
// hook propagates unchanged, with every span ended and nothing leaked. On a
// goroutine of steadfast's own (a Stream's forwarder, a RunnableFunc's Batch
// item) it is recovered and delivered where failures go (the stream's last
// value, the item's error) as an error carrying a *core.PanicError with the
// panic value and stack.
//
// Errors speak to the decorators without their importing each other: a
// Retryable() bool method gives the retry layer a verdict, RetryAfter() a
// hint, StatusCode() (or HTTPStatusCode()) a status, ErrorType() the
// error.type telemetry attribute, Local() bool says the call was refused
// on this side of the wire (a rate limiter, an open circuit), so a circuit
// breaker never counts it, and CannotServe() bool says what answered (a
// key, an account) cannot serve any request now, so a pool routes around
// it. Every package reads these methods the same way, so classification
// and error.type agree.
//
// A decorator that wraps one Runnable without changing its meaning has an
// Unwrap() core.Runnable method; core.NameOf, core.IsIdempotent and the
// call span's attributes (a CallAttributes method) follow it, so the wrapped
// model's name and GenAI attributes survive any stack of decorators.
//
// This package holds documentation only.
package steadfast

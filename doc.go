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
// The packages:
//
//   - core: the Runnable contract, RunnableFunc, call options and Chain.
//   - retry: RetryRunnable, RetryConfig and its JSON policy files,
//     classification, the retry budget and telemetry.
//   - ratelimit: a token-bucket decorator over golang.org/x/time/rate.
//   - breaker: a circuit-breaker decorator over sony/gobreaker.
//   - providers/openai, providers/anthropic (modules of their own): the
//     official LLM SDKs as Runnables, with error adapters.
//
// Compose them retry outermost:
//
//	r := core.Chain(llm, retry.Middleware(cfg), breaker.Middleware(st), ratelimit.Middleware(lim))
//
// This package holds documentation only.
package steadfast

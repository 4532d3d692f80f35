// Package hedge cuts the tail latency of a Runnable: when an answer is slow
// to come, it sends the same call again (to the same Runnable, or to the
// next of several alternates) and takes the first success.
//
// A call makes its first attempt at once and, each time Config.Delay
// passes with no answer yet, one more, up to Config.MaxHedges more. An
// attempt that fails sends the next one at once rather than after the
// delay. The first success wins; every other attempt is cancelled at once
// (its context's cause says "hedge: another attempt answered first") and
// its result dropped. With Config.Quantile the delay follows the latency of recent successful
// attempts (0.95: their p95), at least Config.Delay and at most
// Config.MaxDelay.
//
// Stream races up to the first chunk: the losing streams are cancelled
// before any of their chunks can reach the consumer, and the winner's
// stream is forwarded whole. Batch is not hedged: a batch is many calls, so
// hedge the Runnable of its items instead. A call that no attempt answers
// fails with an *Error naming each attempt's failure.
//
// Hedging repeats calls, so a Runnable whose Idempotent() is false is never
// hedged: its calls pass straight through. A retry.Budget given with
// WithBudget is asked before each hedge, so hedging cannot turn an
// overload into a storm.
//
// Telemetry: a call span hedge.invoke or hedge.stream with one child span
// hedge.attempt per attempt (hedge.index, hedge.hedged for all but the
// first, hedge.won; error.type on a failed one), and a hedge.attempts
// counter labelled by hedge.won.
//
// The attempts run on goroutines of the call. The call returns as soon as
// one wins or all have failed; the losers' goroutines end when their
// cancelled calls return.
package hedge

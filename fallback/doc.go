// Package fallback moves a call to the next of several Runnables when the
// current one cannot serve now: another model when the first one's quota is
// spent, its circuit is open, its Retry-After is longer than the caller can
// wait, or the prompt is over its context length.
//
// A Runnable tries its candidates in order, usually each one
// retry(breaker(model)). It moves to the next when the current one's
// failure says it cannot serve now (see CannotServe, or WithSwitchIf), and
// never on the caller's own cancellation, nor once the caller's context is
// done. A candidate that stopped early for the deadline (its next attempt,
// or a limiter's permit, would come too late) while the caller's context is
// live is moved on from: the next may answer in time.
//
//   - Invoke returns the first candidate's success.
//   - Stream moves on before the first chunk reaches the consumer; after
//     it, a failure is the stream's last value, unless the caller passed
//     core.WithResets: then the stream goes on as a core.Reset and the next
//     candidate's answer to the original input (WithMaxRestarts, event
//     fallback.restart). No chunk of a candidate it moved away from is
//     delivered after the move.
//   - Batch sends only the failed items to the next candidate and merges
//     the results by index.
//
// WithInput translates the input for each candidate (one provider's
// request parameters to another's); a plain string serves every provider
// as it is. When no candidate serves, the error is an *Error that names
// every candidate's failure, each reachable with errors.Is and errors.As.
//
// Telemetry: a span fallback.invoke, fallback.batch or fallback.stream per
// call, with the candidate that answered (fallback.candidate,
// fallback.candidate.name) and the switches made (fallback.switches, a
// fallback.switch event each, fallback.restart for a restart), the
// candidates' own spans beneath it; a fallback.switches counter.
//
// Panics follow steadfast's policy: on the caller's goroutine they
// propagate unchanged with the span ended; on the stream's forwarding
// goroutine they are the stream's last value, a *core.PanicError.
package fallback

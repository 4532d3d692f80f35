// Package budget holds the two budgets of steadfast: the load law that
// retry.RecommendedBudget runs (how many of a call's attempts a client
// sends to a provider that is failing: two published rules over one
// window of counts, below), and a run's budget (WithRun: the calls,
// tokens and dollars one agent run may spend, see Run).
//
// Counts. Every attempt sent is counted at its answer, in a window of the
// last Window (ten slots, as Finagle's WindowedAdder): requests, accepts
// (a success; a failure not worth retrying, such as a 400; an output the
// caller rejected) and, among the requests, first attempts. What this side
// refused (the throttle, a limiter, an open circuit) and what the caller
// cancelled are never counted. At its answer, not its send, so that the
// calls a client starts before any has answered (an LLM call takes
// seconds) are not read as refused, and a call longer than the window
// still counts.
//
// Every attempt: client-side adaptive throttling, from the SRE book's
// "Handling Overload", padded as grpc-go's adaptive throttler (its RLS
// balancer's) pads it. An attempt, a call's first as a retry, is refused
// here, before it is sent, with probability
//
//	p = max(0, (requests − K·accepts − Padding) / (requests + Padding))
//
// (the book's is Padding 1, less one refusal). While the provider accepts
// more than one request in K the client sends everything; beyond, about
// √(asked·K·accepts), since the throttle's own refusals are not requests
// (counted, as the book counts them, they keep it shut long after the
// provider is back). A collapsed provider is offered a fraction of its
// load, and may recover.
//
// Retries, besides: a retry budget, as Finagle's RetryBudget and Envoy's
// retry budget are. Retries may be made at
//
//	rate = Ratio · firsts / Window + Floor     (retries a second)
//
// from a token bucket holding a hundredth of a second of them (at least
// one), so that a herd's retries are spread, never released at once. A
// retry waits for its token at most MaxWait (or less, as its caller
// asks), else it is refused.
//
// Parameters (Setting), each with its default and its reason:
//
//	K        2    the SRE book's: throttle only once the provider refuses more than half
//	Padding  8    grpc-go's: a quiet client's few 503s never refuse its next calls
//	Ratio    0.5  an overload's bursts fail about a quarter of first attempts: each may be retried, twice over
//	Floor    1/s  a client too quiet to earn retries may still make one a second
//	Window   1s   holds tens of answers at any load worth throttling; read in half of it
//	MaxWait  1s   moves an overload's retries into its lulls; never holds a retry longer
//
// The law is specified once, by the vectors of testdata/law.json, which
// this package and the fleet module's Redis script both pass.
package budget

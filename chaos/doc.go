// Package chaos injects the failures LLM providers have into a pipeline's
// own tests and staging, shaped as the providers shape them: a 429 with a
// Retry-After, or with its wait only in the message; an overload (529); a
// 500; a quota spent; a prompt over the context window; a slow or hung
// call; a stream that breaks, stalls or reports an error after its first
// chunks. Proving that a pipeline survives them is then a test, not a
// wait for a bad day.
//
// Faults go in at one of two places:
//
//   - [Transport], an http.RoundTripper for the SDKs' clients (openai-go,
//     anthropic-sdk-go and genai take an *http.Client): each fault is the
//     provider's answer on the wire (status, headers, JSON error body,
//     server-sent events cut or stalled), so the real SDK and the real
//     adapter read it.
//   - [New] and [Middleware], innermost in a chain of Runnables: each
//     fault is the error the providers' adapters return
//     (llmhttp.APIError), read by the retry rules, pools and breakers as
//     a provider's.
//
// A fault fires only when told to: at a seeded rate (Fault.Rate), its
// first n times (Fault.First), or when a predicate on the call's context
// says so (Fault.When). Each injection adds the event chaos.injected, with
// the attribute chaos.fault naming it, to the span in the context (the
// retry layer's attempt span), when that span records.
//
//	faults := []chaos.Fault{
//		chaos.RateLimited(2 * time.Second).First(1),
//		chaos.StreamBroken(40).Rate(0.1, 7),
//	}
//	client := &http.Client{Transport: chaos.Transport(nil, faults...)}
package chaos

// Package genai records, in the GenAI semantic conventions' latest
// (experimental) form, each request a retry layer's attempt sends to a
// provider: a CLIENT span gen_ai.client.inference and the
// gen_ai.client.inference.* metrics. A retry layer in that mode gives each
// attempt (each item of a Batch round) a Slot in its context; the provider
// adapter starts the inference in it when it sends the request
// (llmhttp.Inference), llmhttp's Pump and Response.Record tell it the
// chunks and the response, and the retry layer ends it with the attempt.
// A local refusal (a budget, limiter or breaker that never called the
// provider) starts no inference, so it emits no gen_ai.* at all.
package genai

import (
	"os"
	"strings"
)

// OptInEnv is the environment variable OpenTelemetry's instrumentations
// read for the conventions' versions; OptInValue in its comma-separated
// list turns the mode on for every retry layer.
const (
	OptInEnv   = "OTEL_SEMCONV_STABILITY_OPT_IN"
	OptInValue = "gen_ai_latest_experimental"
)

// FromEnv reports whether the environment opts in to the latest GenAI
// conventions. It is read when a retry layer is built, as the
// instrumentations read it when they instrument.
func FromEnv() bool {
	for v := range strings.SplitSeq(os.Getenv(OptInEnv), ",") {
		if strings.TrimSpace(v) == OptInValue {
			return true
		}
	}
	return false
}

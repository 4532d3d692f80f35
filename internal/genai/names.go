package genai

import "go.opentelemetry.io/otel/attribute"

// The names this package emits, in one table: the GenAI semantic
// conventions' (open-telemetry/semantic-conventions-genai, Development),
// checked against the conventions' model YAML at a pinned commit, vendored
// under testdata/ (semconv_test.go), so that a rename upstream is seen when
// the vendored files are brought up to date.

// SpanType is the conventions' id of the inference span (its name is
// "{gen_ai.operation.name} {gen_ai.request.model}").
const SpanType = "gen_ai.client.inference"

// An instrument is one metric of the table.
type instrument struct {
	Name, Kind, Unit, Brief string
}

// The metrics, by the field of Instruments that records each.
var (
	mDuration     = instrument{"gen_ai.client.inference.duration", "histogram", "s", "GenAI client inference operation duration."}
	mFirstChunk   = instrument{"gen_ai.client.inference.time_to_first_chunk", "histogram", "s", "Time to receive the first chunk, measured from when the client issues the generation request to when the first chunk is received in the response stream."}
	mPerChunk     = instrument{"gen_ai.client.inference.time_per_output_chunk", "histogram", "s", "Time per output chunk, recorded for each chunk received after the first one."}
	mUsageInput   = instrument{"gen_ai.client.inference.usage.input_tokens", "counter", "{token}", "The number of input (prompt) tokens used, including cached tokens."}
	mUsageOutput  = instrument{"gen_ai.client.inference.usage.output_tokens", "counter", "{token}", "The number of output (completion) tokens used, including reasoning tokens."}
	mOpInput      = instrument{"gen_ai.client.inference.operation.input_tokens", "histogram", "{token}", "The number of input (prompt) tokens used per inference operation."}
	mOpOutput     = instrument{"gen_ai.client.inference.operation.output_tokens", "histogram", "{token}", "The number of output (completion) tokens used per inference operation."}
	allInstrument = []instrument{mDuration, mFirstChunk, mPerChunk, mUsageInput, mUsageOutput, mOpInput, mOpOutput}
)

// Attribute keys the inference span and metrics carry beyond those the
// provider adapter passes (gen_ai.operation.name, gen_ai.provider.name,
// gen_ai.request.model) and llmhttp.Response.Record sets.
const (
	keyOperation     = attribute.Key("gen_ai.operation.name")
	keyProvider      = attribute.Key("gen_ai.provider.name")
	keyRequestModel  = attribute.Key("gen_ai.request.model")
	keyStream        = attribute.Key("gen_ai.request.stream")
	keyFinishReasons = attribute.Key("gen_ai.response.finish_reasons")
	keyTokenModality = attribute.Key("gen_ai.token.modality")
	keyErrorType     = attribute.Key("error.type")
	keyResendCount   = attribute.Key("http.request.resend_count")
)

// modalityUnknown is gen_ai.token.modality on the usage counters: the
// providers report totals, not a split by modality, and the conventions
// record a missing usage as 0 with modality unknown.
const modalityUnknown = "unknown"

// allKeys are the attribute keys above, for the check against the model.
var allKeys = []attribute.Key{keyOperation, keyProvider, keyRequestModel, keyStream, keyFinishReasons, keyTokenModality, keyErrorType, keyResendCount}

// inferenceOperations are the gen_ai.operation.name values of the
// conventions' inference span; other operations (execute_tool,
// embeddings) have spans of their own.
var inferenceOperations = map[string]bool{"chat": true, "text_completion": true, "generate_content": true}

// IsInference reports whether attrs name an inference operation: a retry
// layer in the GenAI mode leaves those off its call span, where a backend
// would count them again, and keeps the others' (an MCP tool's).
func IsInference(attrs []attribute.KeyValue) bool {
	for _, kv := range attrs {
		if kv.Key == keyOperation {
			return inferenceOperations[kv.Value.AsString()]
		}
	}
	return false
}

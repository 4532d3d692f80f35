package llmhttp

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/internal/genai"
	"github.com/steadfast-go/steadfast/internal/usage"
)

// Response is what a provider reported of one response: the GenAI
// semantic conventions' response attributes. Zero fields are not
// reported. It holds no prompt or answer text.
type Response struct {
	ID, Model     string
	FinishReasons []string
	// InputTokens and OutputTokens count only when HasUsage is set, since
	// 0 is a real count.
	InputTokens, OutputTokens int64
	HasUsage                  bool
}

// Record puts r on the span in ctx (the attempt span, when a retry layer
// made the call; its inference span, under Inference's ctx), if it records: gen_ai.response.id,
// gen_ai.response.model, gen_ai.response.finish_reasons,
// gen_ai.usage.input_tokens and gen_ai.usage.output_tokens. Its usage is
// also what the retry layer counts of the call's tokens (the call span's
// retry.tokens.*, RetryConfig.MaxRetryTokens), tracing or not: an adapter
// records each response once, a stream's when it ends, broken or not, with
// what the provider reported of it so far.
func (r *Response) Record(ctx context.Context) {
	if r.HasUsage {
		usage.Report(ctx, r.InputTokens, r.OutputTokens)
	}
	if s := genai.From(ctx); s != nil {
		s.Respond(r.HasUsage, r.InputTokens, r.OutputTokens, len(r.FinishReasons) > 0)
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	kv := make([]attribute.KeyValue, 0, 5)
	if r.ID != "" {
		kv = append(kv, semconv.GenAIResponseIDKey.String(r.ID))
	}
	if r.Model != "" {
		kv = append(kv, semconv.GenAIResponseModelKey.String(r.Model))
	}
	if len(r.FinishReasons) > 0 {
		kv = append(kv, semconv.GenAIResponseFinishReasons(r.FinishReasons...))
	}
	if r.HasUsage {
		kv = append(kv, semconv.GenAIUsageInputTokensKey.Int64(r.InputTokens), semconv.GenAIUsageOutputTokensKey.Int64(r.OutputTokens))
	}
	span.SetAttributes(kv...)
}

// What is wrong with an answer, as AnswerError.Kind and its error.type.
const (
	// Truncated: the answer hit its token limit (finish reason length,
	// max_tokens, MAX_TOKENS). Retrying the same request truncates again.
	Truncated = "truncated"
	// Filtered: the answer was refused or filtered (content_filter,
	// refusal, SAFETY). Retrying the same request is filtered again.
	Filtered = "filtered"
	// Empty: the answer has no content and no tool call. Worth a retry.
	Empty = "empty_answer"
)

// AnswerError is a provider's answer that came back without an error but
// is not usable: the error of the providers' ready-made output checks
// (RetryConfig.CheckOutput). Truncated and filtered answers are permanent;
// an empty one is retryable. To retry a truncated answer with a higher
// token limit, use a CheckOutput that wraps the check and a NextInput
// that raises the limit.
type AnswerError struct {
	Kind         string // Truncated, Filtered or Empty
	FinishReason string // as the provider reported it, "" if none
}

// Error names what is wrong with the answer, and its finish reason.
func (e *AnswerError) Error() string {
	if e.FinishReason == "" {
		return "llm answer: " + e.Kind
	}
	return fmt.Sprintf("llm answer: %s (finish reason %s)", e.Kind, e.FinishReason)
}

// Retryable reports true only for an empty answer.
func (e *AnswerError) Retryable() bool { return e.Kind == Empty }

// ErrorType names the error for telemetry: its Kind.
func (e *AnswerError) ErrorType() string { return e.Kind }

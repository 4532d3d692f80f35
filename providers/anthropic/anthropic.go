// Package anthropic makes an anthropic-sdk-go client a steadfast
// core.Runnable, with an error adapter that tells the retry layer what the
// Anthropic API meant.
//
// Messages wraps the Messages API: Invoke returns the SDK's full
// *ant.Message, Stream yields the SDK's ant.MessageStreamEventUnion values
// from the first with content on (the stream's failure as an error value),
// Batch runs concurrent Invokes. Text gets the text of either, and
// CheckAnswer is a ready-made output check for RetryConfig.CheckOutput. The SDK's own retries are switched
// off, so that one attempt of a RetryRunnable is one HTTP request: left on,
// the SDK retries twice per attempt and a 3-attempt RetryRunnable can make 9
// requests, with backoffs, budgets and telemetry that see only 3.
//
// AdaptError gives the retry layer the status code, the Retry-After hint
// (retry-after-ms, or Retry-After in seconds or as an HTTP date), the
// x-should-retry verdict, and the verdict of the API's error type:
// rate_limit_error (429), overloaded_error (529), api_error and
// timeout_error are retried; invalid_request_error, authentication_error,
// permission_error, not_found_error, billing_error and request_too_large
// are not. The error type becomes the error.type of telemetry.
package anthropic

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// ProviderName is the gen_ai.provider.name of Anthropic.
const ProviderName = "anthropic"

// DefaultMaxTokens is the max_tokens of requests made from a string or
// from messages.
const DefaultMaxTokens = 1024

// Messages is a core.Runnable over the Messages API. Invoke takes a string
// (one user message), a []ant.MessageParam, or an ant.MessageNewParams (its
// Model defaults to Messages', its MaxTokens to DefaultMaxTokens), and
// returns the SDK's *ant.Message. It is safe for concurrent use.
type Messages struct {
	client ant.Client
	model  string
	limits llmhttp.RateLimitTracker
}

// NewMessages returns a Messages for model. opts configure the client as
// in ant.NewClient (the API key, option.WithBaseURL, ...); the SDK's
// retries are off unless opts turn them back on with option.WithMaxRetries.
func NewMessages(model string, opts ...option.RequestOption) *Messages {
	m := &Messages{model: model}
	observe := option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		sayRetries(req)
		resp, err := next(req)
		m.limits.Observe(resp)
		return resp, err
	})
	opts = append([]option.RequestOption{option.WithMaxRetries(0), observe}, opts...)
	m.client = ant.NewClient(opts...)
	return m
}

// RateLimits returns the rate limits the last response's headers gave
// (anthropic-ratelimit-*), successes and failures alike
// (its RateLimits method).
func (m *Messages) RateLimits() (llmhttp.RateLimits, bool) { return m.limits.RateLimits() }

// Name returns "anthropic.messages", the default operation of its calls.
func (m *Messages) Name() string { return "anthropic.messages" }

// CallAttributes returns the GenAI semantic-convention attributes of its
// calls, which a RetryRunnable puts on its call spans.
func (m *Messages) CallAttributes() []attribute.KeyValue {
	return []attribute.KeyValue{
		semconv.GenAIOperationNameChat,
		semconv.GenAIProviderNameKey.String(ProviderName),
		semconv.GenAIRequestModelKey.String(m.model),
	}
}

// Invoke creates one message and returns the SDK's full *ant.Message:
// every content block (text, tool use), the stop reason, the usage, the id
// and model (Text gets its text). Its GenAI response attributes go on the
// span in ctx, the attempt's under a retry layer.
func (m *Messages) Invoke(ctx context.Context, input any, _ ...core.Option) (any, error) {
	params, err := m.params(input)
	if err != nil {
		return nil, err
	}
	ctx = llmhttp.Inference(ctx, m.CallAttributes()...) // the request leaves here
	msg, err := m.client.Messages.New(ctx, params)
	if err != nil {
		return nil, AdaptError(err)
	}
	r := llmhttp.Response{ID: msg.ID, Model: string(msg.Model), HasUsage: msg.JSON.Usage.Valid(),
		InputTokens: msg.Usage.InputTokens, OutputTokens: msg.Usage.OutputTokens}
	if msg.StopReason != "" {
		r.FinishReasons = []string{string(msg.StopReason)}
	}
	r.Record(ctx)
	return msg, nil
}

// Batch creates one message per input, concurrently (bounded by
// core.WithMaxConcurrency).
func (m *Messages) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(m.Invoke).Batch(ctx, inputs, opts...)
}

// Stream streams a message: each value is the SDK's own
// ant.MessageStreamEventUnion, message_start to message_stop. Events before
// the first with content (a text or tool-input delta, a tool_use block) are
// held back and delivered with it, so a retry layer commits at the first
// real token. A failure after the stream started is its last value; a
// request the API refused is Stream's error.
func (m *Messages) Stream(ctx context.Context, input any, _ ...core.Option) (<-chan any, error) {
	params, err := m.params(input)
	if err != nil {
		return nil, err
	}
	ctx = llmhttp.Inference(ctx, m.CallAttributes()...) // the request leaves here
	s := m.client.Messages.NewStreaming(ctx, params)
	if err := s.Err(); err != nil {
		_ = s.Close()
		return nil, AdaptError(err)
	}
	var r llmhttp.Response
	return llmhttp.Pump(ctx, s, llmhttp.PumpConfig[ant.MessageStreamEventUnion]{
		Content:  hasContent,
		ToolCall: isToolUse,
		Adapt:    AdaptError,
		Observe:  func(ev ant.MessageStreamEventUnion) { observe(&r, ev) },
		Done:     func() { r.Record(ctx) },
	}), nil
}

// hasContent reports an event with text, tool input or a tool call.
func hasContent(ev ant.MessageStreamEventUnion) bool {
	switch ev.Type {
	case "content_block_delta":
		return ev.Delta.Text != "" || ev.Delta.PartialJSON != "" || ev.Delta.Thinking != ""
	case "content_block_start":
		return ev.ContentBlock.Type == "tool_use" || ev.ContentBlock.Text != ""
	}
	return false
}

// isToolUse reports the start of a tool_use block, or its input's delta.
func isToolUse(ev ant.MessageStreamEventUnion) bool {
	switch ev.Type {
	case "content_block_start":
		return ev.ContentBlock.Type == "tool_use"
	case "content_block_delta":
		return ev.Delta.PartialJSON != ""
	}
	return false
}

// observe gathers a stream's response attributes.
func observe(r *llmhttp.Response, ev ant.MessageStreamEventUnion) {
	switch ev.Type {
	case "message_start":
		r.ID, r.Model = ev.Message.ID, string(ev.Message.Model)
		r.HasUsage, r.InputTokens = true, ev.Message.Usage.InputTokens
	case "message_delta":
		if ev.Delta.StopReason != "" {
			r.FinishReasons = []string{string(ev.Delta.StopReason)}
		}
		r.HasUsage, r.OutputTokens = true, ev.Usage.OutputTokens
		if ev.Usage.InputTokens > 0 {
			r.InputTokens = ev.Usage.InputTokens
		}
	}
}

// Text returns the text of a Messages output: the text blocks of an
// *ant.Message joined, or a stream event's text delta; "" for anything
// else.
func Text(output any) string {
	switch v := output.(type) {
	case *ant.Message:
		var b strings.Builder
		for _, block := range v.Content {
			if block.Type == "text" {
				b.WriteString(block.Text)
			}
		}
		return b.String()
	case ant.MessageStreamEventUnion:
		if v.Type == "content_block_delta" && v.Delta.Type == "text_delta" {
			return v.Delta.Text
		}
	}
	return ""
}

// CheckAnswer is a ready-made RetryConfig.CheckOutput for Messages: a
// message cut at its token limit (stop reason max_tokens) or refused
// (refusal) is a permanent *llmhttp.AnswerError, and one with no text and
// no tool use is a retryable one.
func CheckAnswer(_ context.Context, _, output any) error {
	msg, ok := output.(*ant.Message)
	if !ok {
		return &llmhttp.AnswerError{Kind: llmhttp.Empty}
	}
	reason := string(msg.StopReason)
	switch msg.StopReason {
	case ant.StopReasonMaxTokens:
		return &llmhttp.AnswerError{Kind: llmhttp.Truncated, FinishReason: reason}
	case ant.StopReasonRefusal:
		return &llmhttp.AnswerError{Kind: llmhttp.Filtered, FinishReason: reason}
	}
	for _, block := range msg.Content {
		if block.Type == "tool_use" || (block.Type == "text" && block.Text != "") {
			return nil
		}
	}
	return &llmhttp.AnswerError{Kind: llmhttp.Empty, FinishReason: reason}
}

func (m *Messages) params(input any) (ant.MessageNewParams, error) {
	switch v := input.(type) {
	case string:
		return ant.MessageNewParams{
			Model: m.model, MaxTokens: DefaultMaxTokens,
			Messages: []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock(v))},
		}, nil
	case []ant.MessageParam:
		return ant.MessageNewParams{Model: m.model, MaxTokens: DefaultMaxTokens, Messages: v}, nil
	case ant.MessageNewParams:
		if v.Model == "" {
			v.Model = m.model
		}
		if v.MaxTokens == 0 {
			v.MaxTokens = DefaultMaxTokens
		}
		return v, nil
	}
	return ant.MessageNewParams{}, &inputError{input: input}
}

// inputError is a call with an input Messages cannot send: never retried.
type inputError struct{ input any }

func (e *inputError) Error() string {
	return fmt.Sprintf("anthropic: Messages takes a string, []MessageParam or MessageNewParams, not %T", e.input)
}
func (e *inputError) Retryable() bool { return false }

// retryCountHeader is the header in which anthropic-sdk-go tells the
// server how many times it sent a request before, when it retries it
// itself.
const retryCountHeader = "X-Stainless-Retry-Count"

// sayRetries tells the server how many times the retry layers above sent
// the request before (retry.AttemptInfo.Retries), as anthropic-sdk-go does
// for its own retries, which are off here. A value the caller set is
// kept: only the SDK's own "0" is replaced.
func sayRetries(req *http.Request) {
	if info, ok := retry.AttemptFromContext(req.Context()); ok && info.Retries > 0 && req.Header.Get(retryCountHeader) == "0" {
		req.Header.Set(retryCountHeader, strconv.Itoa(info.Retries))
	}
}

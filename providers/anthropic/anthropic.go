// Package anthropic makes an anthropic-sdk-go client a steadfast
// core.Runnable, with an error adapter that tells the retry layer what the
// Anthropic API meant.
//
// Messages wraps the Messages API: Invoke creates one message, Stream
// yields its text deltas as string chunks (the stream's failure as an error
// value), Batch runs concurrent Invokes. The SDK's own retries are switched
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
	"strings"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
)

// ProviderName is the gen_ai.provider.name of Anthropic.
const ProviderName = "anthropic"

// DefaultMaxTokens is the max_tokens of requests made from a string or
// from messages.
const DefaultMaxTokens = 1024

// Messages is a core.Runnable over the Messages API. Invoke takes a string
// (one user message), a []ant.MessageParam, or an ant.MessageNewParams (its
// Model defaults to Messages', its MaxTokens to DefaultMaxTokens), and
// returns the text of the reply. It is safe for concurrent use.
type Messages struct {
	client ant.Client
	model  string
}

// NewMessages returns a Messages for model. opts configure the client as
// in ant.NewClient (the API key, option.WithBaseURL, ...); the SDK's
// retries are off unless opts turn them back on with option.WithMaxRetries.
func NewMessages(model string, opts ...option.RequestOption) *Messages {
	opts = append([]option.RequestOption{option.WithMaxRetries(0)}, opts...)
	return &Messages{client: ant.NewClient(opts...), model: model}
}

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

// Invoke creates one message and returns the text of its text blocks.
func (m *Messages) Invoke(ctx context.Context, input any, _ ...core.Option) (any, error) {
	params, err := m.params(input)
	if err != nil {
		return nil, err
	}
	msg, err := m.client.Messages.New(ctx, params)
	if err != nil {
		return nil, AdaptError(err)
	}
	var text strings.Builder
	for _, block := range msg.Content {
		if block.Type == "text" {
			text.WriteString(block.Text)
		}
	}
	return text.String(), nil
}

// Batch creates one message per input, concurrently (bounded by
// core.WithMaxConcurrency).
func (m *Messages) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(m.Invoke).Batch(ctx, inputs, opts...)
}

// Stream streams a message: each chunk is a string text delta, and a
// failure after the stream started is its last value. A request the API
// refused is Stream's error.
func (m *Messages) Stream(ctx context.Context, input any, _ ...core.Option) (<-chan any, error) {
	params, err := m.params(input)
	if err != nil {
		return nil, err
	}
	s := m.client.Messages.NewStreaming(ctx, params)
	if err := s.Err(); err != nil {
		_ = s.Close()
		return nil, AdaptError(err)
	}
	return llmhttp.Pump(ctx, s, deltaText, AdaptError), nil
}

func deltaText(ev ant.MessageStreamEventUnion) string {
	if ev.Type != "content_block_delta" || ev.Delta.Type != "text_delta" {
		return ""
	}
	return ev.Delta.Text
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

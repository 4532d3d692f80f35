// Package openai makes an openai-go client a steadfast core.Runnable, with
// an error adapter that tells the retry layer what the OpenAI API meant.
//
// Chat wraps the Chat Completions API: Invoke makes one completion, Stream
// yields its text deltas as string chunks (the stream's failure as an error
// value), Batch runs concurrent Invokes. The SDK's own retries are switched
// off, so that one attempt of a RetryRunnable is one HTTP request: left on,
// the SDK retries twice per attempt and a 3-attempt RetryRunnable can make 9
// requests, with backoffs, budgets and telemetry that see only 3.
//
// AdaptError gives the retry layer the status code, the Retry-After hint
// (retry-after-ms, or Retry-After in seconds or as an HTTP date), the
// x-should-retry verdict, and a no-retry verdict for errors that no retry
// fixes: an exhausted quota or billing limit (a 429 that is not a rate
// limit), a prompt over the context length, an invalid request or key. The
// API's error code becomes the error.type of telemetry.
package openai

import (
	"context"
	"errors"
	"fmt"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
)

// ProviderName is the gen_ai.provider.name of OpenAI.
const ProviderName = "openai"

// Chat is a core.Runnable over the Chat Completions API. Invoke takes a
// string (one user message), a []oai.ChatCompletionMessageParamUnion, or an
// oai.ChatCompletionNewParams (its Model defaults to Chat's), and returns
// the first choice's text. It is safe for concurrent use.
type Chat struct {
	client oai.Client
	model  string
}

// NewChat returns a Chat for model. opts configure the client as in
// oai.NewClient (the API key, option.WithBaseURL, ...); the SDK's retries
// are off unless opts turn them back on with option.WithMaxRetries.
func NewChat(model string, opts ...option.RequestOption) *Chat {
	opts = append([]option.RequestOption{option.WithMaxRetries(0)}, opts...)
	return &Chat{client: oai.NewClient(opts...), model: model}
}

// Name returns "openai.chat", the default operation of its calls.
func (c *Chat) Name() string { return "openai.chat" }

// CallAttributes returns the GenAI semantic-convention attributes of its
// calls, which a RetryRunnable puts on its call spans.
func (c *Chat) CallAttributes() []attribute.KeyValue {
	return []attribute.KeyValue{
		semconv.GenAIOperationNameChat,
		semconv.GenAIProviderNameKey.String(ProviderName),
		semconv.GenAIRequestModelKey.String(c.model),
	}
}

// Invoke makes one chat completion and returns its first choice's text.
func (c *Chat) Invoke(ctx context.Context, input any, _ ...core.Option) (any, error) {
	params, err := c.params(input)
	if err != nil {
		return nil, err
	}
	res, err := c.client.Chat.Completions.New(ctx, params)
	if err != nil {
		return nil, AdaptError(err)
	}
	if len(res.Choices) == 0 {
		return nil, errors.New("openai: the completion has no choices")
	}
	return res.Choices[0].Message.Content, nil
}

// Batch makes one completion per input, concurrently (bounded by
// core.WithMaxConcurrency).
func (c *Chat) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(c.Invoke).Batch(ctx, inputs, opts...)
}

// Stream streams a completion: each chunk is a string text delta, and a
// failure after the stream started is its last value. A request the API
// refused is Stream's error.
func (c *Chat) Stream(ctx context.Context, input any, _ ...core.Option) (<-chan any, error) {
	params, err := c.params(input)
	if err != nil {
		return nil, err
	}
	s := c.client.Chat.Completions.NewStreaming(ctx, params)
	if err := s.Err(); err != nil {
		_ = s.Close()
		return nil, AdaptError(err)
	}
	return llmhttp.Pump(ctx, s, deltaText, AdaptError), nil
}

func deltaText(chunk oai.ChatCompletionChunk) string {
	if len(chunk.Choices) == 0 {
		return ""
	}
	return chunk.Choices[0].Delta.Content
}

func (c *Chat) params(input any) (oai.ChatCompletionNewParams, error) {
	switch v := input.(type) {
	case string:
		return oai.ChatCompletionNewParams{Model: c.model, Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage(v)}}, nil
	case []oai.ChatCompletionMessageParamUnion:
		return oai.ChatCompletionNewParams{Model: c.model, Messages: v}, nil
	case oai.ChatCompletionNewParams:
		if v.Model == "" {
			v.Model = c.model
		}
		return v, nil
	}
	return oai.ChatCompletionNewParams{}, &inputError{input: input}
}

// inputError is a call with an input Chat cannot send: never retried.
type inputError struct{ input any }

func (e *inputError) Error() string {
	return fmt.Sprintf("openai: Chat takes a string, messages or ChatCompletionNewParams, not %T", e.input)
}
func (e *inputError) Retryable() bool { return false }

// Package openai makes an openai-go client a steadfast core.Runnable, with
// an error adapter that tells the retry layer what the OpenAI API meant.
//
// Chat wraps the Chat Completions API and Responses the Responses API
// (with WithResumableStreams its streams resume exactly, and its Invokes
// are background responses it polls: stored by OpenAI). Chat's Invoke
// returns the SDK's full
// *oai.ChatCompletion, Stream yields the SDK's oai.ChatCompletionChunk
// values from the first with content on (the stream's failure as an error
// value), Batch runs concurrent Invokes. Text gets the text of either, and
// CheckAnswer is a ready-made output check for RetryConfig.CheckOutput. The SDK's own retries are switched
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
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strconv"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// ProviderName is the gen_ai.provider.name of OpenAI.
const ProviderName = "openai"

// Chat is a core.Runnable over the Chat Completions API. Invoke takes a
// string (one user message), a []oai.ChatCompletionMessageParamUnion, or an
// oai.ChatCompletionNewParams (its Model defaults to Chat's), and returns
// the SDK's *oai.ChatCompletion. It is safe for concurrent use.
type Chat struct {
	client oai.Client
	model  string
	limits llmhttp.RateLimitTracker
}

// NewChat returns a Chat for model. opts configure the client as in
// oai.NewClient (the API key, option.WithBaseURL, ...); the SDK's retries
// are off unless opts turn them back on with option.WithMaxRetries.
func NewChat(model string, opts ...option.RequestOption) *Chat {
	c := &Chat{model: model}
	opts = append([]option.RequestOption{option.WithMaxRetries(0), observeLimits(&c.limits)}, opts...)
	c.client = oai.NewClient(opts...)
	return c
}

// RateLimits returns the rate limits the last response's headers gave
// (x-ratelimit-*), successes and failures alike (its RateLimits method).
func (c *Chat) RateLimits() (llmhttp.RateLimits, bool) { return c.limits.RateLimits() }

// observeLimits is a request option that tells the server each
// request's retry count (sayRetries) and reads every response's rate
// limits into t.
func observeLimits(t *llmhttp.RateLimitTracker) option.RequestOption {
	return option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		sayRetries(req)
		resp, err := next(req)
		t.Observe(resp)
		return resp, err
	})
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

// Invoke makes one chat completion and returns the SDK's full response, a
// *oai.ChatCompletion: every choice, its finish reason and tool calls, the
// usage, the id and model (Text gets its text). Its GenAI response
// attributes go on the span in ctx, the attempt's under a retry layer.
func (c *Chat) Invoke(ctx context.Context, input any, _ ...core.Option) (any, error) {
	params, err := c.params(input)
	if err != nil {
		return nil, err
	}
	ctx = llmhttp.Inference(ctx, c.CallAttributes()...) // the request leaves here
	res, err := c.client.Chat.Completions.New(ctx, params)
	if err != nil {
		return nil, AdaptError(err)
	}
	r := llmhttp.Response{ID: res.ID, Model: res.Model, HasUsage: res.JSON.Usage.Valid(),
		InputTokens: res.Usage.PromptTokens, OutputTokens: res.Usage.CompletionTokens}
	for _, ch := range res.Choices {
		r.FinishReasons = append(r.FinishReasons, ch.FinishReason)
	}
	r.Record(ctx)
	return res, nil
}

// Batch makes one completion per input, concurrently (bounded by
// core.WithMaxConcurrency).
func (c *Chat) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(c.Invoke).Batch(ctx, inputs, opts...)
}

// Stream streams a completion: each value is the SDK's own
// oai.ChatCompletionChunk, up to the final chunk with the usage, which
// Stream asks for unless the params say otherwise. Chunks before the first
// with content, a refusal or a tool-call delta (the role-only first chunk)
// are held back and delivered with it, so a retry layer commits at the
// first real token. A failure after the stream started is its last value;
// a request the API refused is Stream's error.
func (c *Chat) Stream(ctx context.Context, input any, _ ...core.Option) (<-chan any, error) {
	params, err := c.params(input)
	if err != nil {
		return nil, err
	}
	if !params.StreamOptions.IncludeUsage.Valid() {
		params.StreamOptions.IncludeUsage = oai.Bool(true)
	}
	ctx = llmhttp.Inference(ctx, c.CallAttributes()...) // the request leaves here
	s := c.client.Chat.Completions.NewStreaming(ctx, params)
	if err := s.Err(); err != nil {
		_ = s.Close()
		return nil, AdaptError(err)
	}
	var r llmhttp.Response
	return llmhttp.Pump(ctx, s, llmhttp.PumpConfig[oai.ChatCompletionChunk]{
		Content:  hasContent,
		ToolCall: hasToolCall,
		Adapt:    AdaptError,
		Observe:  func(ch oai.ChatCompletionChunk) { observe(&r, ch) },
		Done:     func() { r.Record(ctx) },
	}), nil
}

// hasContent reports a chunk with text, a refusal or a tool call.
func hasContent(chunk oai.ChatCompletionChunk) bool {
	for _, ch := range chunk.Choices {
		d := ch.Delta
		if d.Content != "" || d.Refusal != "" || len(d.ToolCalls) > 0 {
			return true
		}
	}
	return false
}

// hasToolCall reports a chunk with a tool-call delta.
func hasToolCall(chunk oai.ChatCompletionChunk) bool {
	for _, ch := range chunk.Choices {
		if len(ch.Delta.ToolCalls) > 0 {
			return true
		}
	}
	return false
}

// observe gathers a stream's response attributes.
func observe(r *llmhttp.Response, chunk oai.ChatCompletionChunk) {
	r.ID, r.Model = cmp.Or(r.ID, chunk.ID), cmp.Or(r.Model, chunk.Model)
	for _, ch := range chunk.Choices {
		if ch.FinishReason != "" {
			r.FinishReasons = append(r.FinishReasons, ch.FinishReason)
		}
	}
	if chunk.JSON.Usage.Valid() {
		r.HasUsage, r.InputTokens, r.OutputTokens = true, chunk.Usage.PromptTokens, chunk.Usage.CompletionTokens
	}
}

// Text returns the text of a Chat output: the first choice's message of a
// *oai.ChatCompletion, or the first choice's delta of a stream's
// oai.ChatCompletionChunk; "" for anything else.
func Text(output any) string {
	switch v := output.(type) {
	case *oai.ChatCompletion:
		if len(v.Choices) > 0 {
			return v.Choices[0].Message.Content
		}
	case oai.ChatCompletionChunk:
		if len(v.Choices) > 0 {
			return v.Choices[0].Delta.Content
		}
	}
	return ""
}

// CheckAnswer is a ready-made RetryConfig.CheckOutput for Chat: a
// completion cut at its token limit (finish reason length) or filtered
// (content_filter) is a permanent *llmhttp.AnswerError, and one with no
// content, refusal or tool call is a retryable one.
func CheckAnswer(_ context.Context, _, output any) error {
	res, ok := output.(*oai.ChatCompletion)
	if !ok || len(res.Choices) == 0 {
		return &llmhttp.AnswerError{Kind: llmhttp.Empty}
	}
	ch := res.Choices[0]
	switch ch.FinishReason {
	case "length":
		return &llmhttp.AnswerError{Kind: llmhttp.Truncated, FinishReason: ch.FinishReason}
	case "content_filter":
		return &llmhttp.AnswerError{Kind: llmhttp.Filtered, FinishReason: ch.FinishReason}
	}
	if ch.Message.Refusal != "" {
		return &llmhttp.AnswerError{Kind: llmhttp.Filtered, FinishReason: ch.FinishReason}
	}
	if ch.Message.Content == "" && len(ch.Message.ToolCalls) == 0 {
		return &llmhttp.AnswerError{Kind: llmhttp.Empty, FinishReason: ch.FinishReason}
	}
	return nil
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
	return oai.ChatCompletionNewParams{}, &inputError{input: input, what: "Chat takes a string, messages or ChatCompletionNewParams"}
}

// inputError is a call with an input a Runnable cannot send: never
// retried.
type inputError struct {
	input any
	what  string
}

func (e *inputError) Error() string {
	return fmt.Sprintf("openai: %s, not %T", e.what, e.input)
}
func (e *inputError) Retryable() bool { return false }

// retryCountHeader is the header in which openai-go tells the server how
// many times it sent a request before, when it retries it itself.
const retryCountHeader = "X-Stainless-Retry-Count"

// sayRetries tells the server how many times the retry layers above sent
// the request before (retry.AttemptInfo.Retries), as openai-go does for
// its own retries, which are off here. A value the caller set is kept:
// only the SDK's own "0" is replaced.
func sayRetries(req *http.Request) {
	if info, ok := retry.AttemptFromContext(req.Context()); ok && info.Retries > 0 && req.Header.Get(retryCountHeader) == "0" {
		req.Header.Set(retryCountHeader, strconv.Itoa(info.Retries))
	}
}

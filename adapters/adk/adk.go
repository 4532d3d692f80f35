// Package adk makes steadfast one import away for Google's Agent
// Development Kit (google.golang.org/adk/v2): an ADK model as a
// core.Runnable (FromLLM), so retry, fallback, pool, ratelimit, breaker
// and hedge wrap it, and any Runnable chain as an ADK model (ToLLM), so an
// llmagent gets retries that read the provider's hints, a fallback model,
// pools and stall timeouts without hand-written model wrappers; and the
// retry rules for workflow.RetryConfig (ShouldRetry).
//
//	chain, _ := retry.New(adk.FromLLM(gemini), cfg)
//	agent, _ := llmagent.New(llmagent.Config{Name: "helper", Model: adk.ToLLM(chain, "gemini-2.5-flash")})
//
// Invoke collects GenerateContent(ctx, req, false); Stream yields the
// *model.LLMResponse values of GenerateContent(ctx, req, true), holding
// back those before the first with content so that a retry layer commits
// at the first real token. Gemini's errors (genai.APIError) are classified
// by providers/gemini's AdaptError: status, RetryInfo's delay, a per-day
// quota that no wait fixes.
//
// ADK's Gemini model makes one HTTP request per call unless its genai
// client is given retry options of its own; leave those unset, so that a
// call makes at most MaxRetries+1 requests.
package adk

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/adk/v2/model"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/providers/gemini"
	"github.com/steadfast-go/steadfast/retry"
)

// llm is an ADK model as a core.Runnable.
type llm struct {
	m model.LLM
}

// FromLLM returns m as a core.Runnable. Its input is a *model.LLMRequest;
// Invoke returns the *model.LLMResponse, Stream yields them. A nil m makes
// a Runnable whose every call fails, not retryable, saying so.
func FromLLM(m model.LLM) core.Runnable {
	if m == nil {
		return core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
			return nil, retry.Permanent(errors.New("adk: FromLLM: the model is nil"))
		})
	}
	return &llm{m: m}
}

// Name returns the model's name, the default operation of its calls.
func (l *llm) Name() string { return l.m.Name() }

// Invoke calls GenerateContent without streaming and returns its last
// response (the model's one).
func (l *llm) Invoke(ctx context.Context, input any, _ ...core.Option) (any, error) {
	req, err := request(input)
	if err != nil {
		return nil, err
	}
	var last *model.LLMResponse
	var r llmhttp.Response
	for resp, err := range l.m.GenerateContent(ctx, req, false) {
		if err != nil {
			return nil, gemini.AdaptError(err)
		}
		observe(&r, resp)
		last = resp
	}
	if last == nil {
		return nil, errors.New("adk: the model answered nothing")
	}
	r.Record(ctx)
	return last, nil
}

// Batch makes one call per input, concurrently (bounded by
// core.WithMaxConcurrency).
func (l *llm) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(l.Invoke).Batch(ctx, inputs, opts...)
}

// Stream calls GenerateContent with streaming and yields its responses;
// a failure is the last value. The model's iterator is stopped when the
// stream ends or ctx is done.
func (l *llm) Stream(ctx context.Context, input any, _ ...core.Option) (<-chan any, error) {
	req, err := request(input)
	if err != nil {
		return nil, err
	}
	var r llmhttp.Response
	return llmhttp.PumpSeq(ctx, l.m.GenerateContent(ctx, req, true), llmhttp.PumpConfig[*model.LLMResponse]{
		Content:  hasContent,
		ToolCall: hasFunctionCall,
		Adapt:    gemini.AdaptError,
		Observe:  func(resp *model.LLMResponse) { observe(&r, resp) },
		Done:     func() { r.Record(ctx) },
	}), nil
}

// observe gathers what a response (or a streamed one) says of the call
// for the attempt span: model version, finish reason, usage (the last
// reported: a stream's final response carries the totals).
func observe(r *llmhttp.Response, resp *model.LLMResponse) {
	if resp == nil {
		return
	}
	if resp.ModelVersion != "" {
		r.Model = resp.ModelVersion
	}
	if resp.FinishReason != "" {
		r.FinishReasons = []string{string(resp.FinishReason)}
	}
	if u := resp.UsageMetadata; u != nil {
		r.HasUsage, r.InputTokens, r.OutputTokens = true, int64(u.PromptTokenCount), int64(u.CandidatesTokenCount)
	}
}

// hasContent reports a response with a part: text, a function call.
func hasContent(r *model.LLMResponse) bool {
	return r != nil && r.Content != nil && len(r.Content.Parts) > 0
}

// hasFunctionCall reports a response with a function call.
func hasFunctionCall(r *model.LLMResponse) bool {
	if r == nil || r.Content == nil {
		return false
	}
	for _, p := range r.Content.Parts {
		if p != nil && p.FunctionCall != nil {
			return true
		}
	}
	return false
}

func request(input any) (*model.LLMRequest, error) {
	if req, ok := input.(*model.LLMRequest); ok && req != nil {
		return req, nil
	}
	return nil, retry.Permanent(fmt.Errorf("adk: a model takes a *model.LLMRequest, not %T", input))
}

// ShouldRetry is the retry layer's rules for workflow.RetryConfig's
// ShouldRetry: false for what they call permanent (a 400, a 401, an
// exhausted quota, retry.Permanent) and for a cancellation, true for the
// transient (a 429, a 503, a timeout, a dropped connection). Gemini's
// errors are read as FromLLM reads them.
func ShouldRetry(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false // the run was cancelled: nothing is to go again
	}
	return retry.IsRetryable(gemini.AdaptError(err))
}

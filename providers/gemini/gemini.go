// Package gemini makes a google.golang.org/genai client a steadfast
// core.Runnable, with an error adapter that tells the retry layer what the
// Gemini API meant.
//
// Models wraps GenerateContent: Invoke returns the SDK's full
// *genai.GenerateContentResponse, Stream yields the SDK's
// *genai.GenerateContentResponse chunks from the first with content on
// (the stream's failure as an error value), Batch runs concurrent Invokes.
// Text gets the text of either, and CheckAnswer is a ready-made output
// check for RetryConfig.CheckOutput. The SDK's own retries are switched
// off, so that one attempt of a RetryRunnable is one HTTP request.
//
// AdaptError gives the retry layer the status code, the retry delay of a
// google.rpc.RetryInfo detail as the Retry-After hint, and a no-retry
// verdict for a quota that no retry refills soon: a RESOURCE_EXHAUSTED
// whose google.rpc.QuotaFailure names a per-day quota (a per-minute one is
// retried after its delay). The API's status (RESOURCE_EXHAUSTED,
// UNAVAILABLE, ...) becomes the error.type of telemetry.
package gemini

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"google.golang.org/genai"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
)

// ProviderName is the gen_ai.provider.name of the Gemini API.
const ProviderName = "gcp.gemini"

// Request is a full request: the contents and the generation config.
type Request struct {
	Contents []*genai.Content
	Config   *genai.GenerateContentConfig
}

// Models is a core.Runnable over the GenerateContent API of one model.
// Invoke takes a string (one user message), a []*genai.Content, or a
// Request, and returns the SDK's *genai.GenerateContentResponse. It is
// safe for concurrent use.
type Models struct {
	client *genai.Client
	model  string
}

// New returns a Models for model over a genai client made from cc (its
// APIKey, Backend, HTTPClient, HTTPOptions.BaseURL, ...). The SDK's
// retries are off unless cc.HTTPOptions.RetryOptions sets them.
func New(ctx context.Context, model string, cc genai.ClientConfig) (*Models, error) {
	if model == "" {
		return nil, errors.New("gemini: New: model is empty")
	}
	if cc.HTTPOptions.RetryOptions == nil {
		one := int32(1)
		cc.HTTPOptions.RetryOptions = &genai.HTTPRetryOptions{Attempts: &one}
	}
	client, err := genai.NewClient(ctx, &cc)
	if err != nil {
		return nil, fmt.Errorf("gemini: New: %w", err)
	}
	return &Models{client: client, model: model}, nil
}

// Name returns "gemini.generate_content", the default operation of its
// calls.
func (m *Models) Name() string { return "gemini.generate_content" }

// CallAttributes returns the GenAI semantic-convention attributes of its
// calls, which a RetryRunnable puts on its call spans.
func (m *Models) CallAttributes() []attribute.KeyValue {
	return []attribute.KeyValue{
		semconv.GenAIOperationNameGenerateContent,
		semconv.GenAIProviderNameGCPGemini,
		semconv.GenAIRequestModelKey.String(m.model),
	}
}

// Invoke generates one response and returns the SDK's full
// *genai.GenerateContentResponse: every candidate with its parts (text,
// function calls) and finish reason, the usage, the response id and model
// version. Its GenAI response attributes go on the span in ctx.
func (m *Models) Invoke(ctx context.Context, input any, _ ...core.Option) (any, error) {
	req, err := request(input)
	if err != nil {
		return nil, err
	}
	ctx = llmhttp.Inference(ctx, m.CallAttributes()...) // the request leaves here
	res, err := m.client.Models.GenerateContent(ctx, m.model, req.Contents, req.Config)
	if err != nil {
		return nil, AdaptError(err)
	}
	var r llmhttp.Response
	observe(&r, res)
	r.Record(ctx)
	return res, nil
}

// Batch generates one response per input, concurrently (bounded by
// core.WithMaxConcurrency).
func (m *Models) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(m.Invoke).Batch(ctx, inputs, opts...)
}

// Stream streams a response: each value is a *genai.GenerateContentResponse
// chunk as the SDK produced it. Chunks before the first with text or a
// function call are held back and delivered with it, so a retry layer
// commits at the first real token. A failure, whether the API refused the
// request or the stream broke, is the stream's last value.
func (m *Models) Stream(ctx context.Context, input any, _ ...core.Option) (<-chan any, error) {
	req, err := request(input)
	if err != nil {
		return nil, err
	}
	ctx = llmhttp.Inference(ctx, m.CallAttributes()...) // the request leaves here
	seq := m.client.Models.GenerateContentStream(ctx, m.model, req.Contents, req.Config)
	var r llmhttp.Response
	return llmhttp.PumpSeq(ctx, seq, llmhttp.PumpConfig[*genai.GenerateContentResponse]{
		Content:  hasContent,
		ToolCall: hasFunctionCall,
		Adapt:    AdaptError,
		Observe:  func(res *genai.GenerateContentResponse) { observe(&r, res) },
		Done:     func() { r.Record(ctx) },
	}), nil
}

// hasContent reports a chunk with text or a function call.
func hasContent(res *genai.GenerateContentResponse) bool {
	for _, c := range res.Candidates {
		if c.Content == nil {
			continue
		}
		for _, p := range c.Content.Parts {
			if p.Text != "" || p.FunctionCall != nil {
				return true
			}
		}
	}
	return false
}

// hasFunctionCall reports a chunk with a function call.
func hasFunctionCall(res *genai.GenerateContentResponse) bool {
	for _, c := range res.Candidates {
		if c.Content == nil {
			continue
		}
		for _, p := range c.Content.Parts {
			if p.FunctionCall != nil {
				return true
			}
		}
	}
	return false
}

// observe gathers a response's (or a stream's) attributes.
func observe(r *llmhttp.Response, res *genai.GenerateContentResponse) {
	r.ID, r.Model = cmp.Or(r.ID, res.ResponseID), cmp.Or(r.Model, res.ModelVersion)
	for _, c := range res.Candidates {
		if c.FinishReason != "" {
			r.FinishReasons = append(r.FinishReasons, string(c.FinishReason))
		}
	}
	if u := res.UsageMetadata; u != nil {
		r.HasUsage, r.InputTokens, r.OutputTokens = true, int64(u.PromptTokenCount), int64(u.CandidatesTokenCount)
	}
}

// Text returns the text of a Models output (a response or a stream chunk):
// the text parts of its first candidate joined, thoughts left out; "" for
// anything else. Unlike the SDK's own Text method, it logs nothing.
func Text(output any) string {
	res, ok := output.(*genai.GenerateContentResponse)
	if !ok || len(res.Candidates) == 0 || res.Candidates[0].Content == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range res.Candidates[0].Content.Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// CheckAnswer is a ready-made RetryConfig.CheckOutput for Models: a
// response cut at its token limit (MAX_TOKENS) or blocked (SAFETY,
// RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, or a blocked prompt) is
// a permanent *llmhttp.AnswerError, and one with no text and no function
// call is a retryable one.
func CheckAnswer(_ context.Context, _, output any) error {
	res, ok := output.(*genai.GenerateContentResponse)
	if !ok {
		return &llmhttp.AnswerError{Kind: llmhttp.Empty}
	}
	if pf := res.PromptFeedback; pf != nil && pf.BlockReason != "" {
		return &llmhttp.AnswerError{Kind: llmhttp.Filtered, FinishReason: string(pf.BlockReason)}
	}
	if len(res.Candidates) == 0 {
		return &llmhttp.AnswerError{Kind: llmhttp.Empty}
	}
	reason := res.Candidates[0].FinishReason
	switch reason {
	case genai.FinishReasonMaxTokens:
		return &llmhttp.AnswerError{Kind: llmhttp.Truncated, FinishReason: string(reason)}
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII:
		return &llmhttp.AnswerError{Kind: llmhttp.Filtered, FinishReason: string(reason)}
	}
	if !hasContent(&genai.GenerateContentResponse{Candidates: res.Candidates[:1]}) {
		return &llmhttp.AnswerError{Kind: llmhttp.Empty, FinishReason: string(reason)}
	}
	return nil
}

func request(input any) (Request, error) {
	switch v := input.(type) {
	case string:
		return Request{Contents: genai.Text(v)}, nil
	case []*genai.Content:
		return Request{Contents: v}, nil
	case Request:
		return v, nil
	}
	return Request{}, &inputError{input: input}
}

// inputError is a call with an input Models cannot send: never retried.
type inputError struct{ input any }

func (e *inputError) Error() string {
	return fmt.Sprintf("gemini: Models takes a string, []*genai.Content or a gemini.Request, not %T", e.input)
}
func (e *inputError) Retryable() bool { return false }

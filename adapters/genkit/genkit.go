// Package genkit makes steadfast one import away for Firebase Genkit
// (github.com/firebase/genkit/go): a Genkit model as a core.Runnable
// (FromModel), so retry, fallback, pool, ratelimit, breaker and hedge wrap
// it, and a steadfast chain as a Genkit middleware (Middleware), so every
// model call of a Generate runs through it:
//
//	resp, err := genkit.Generate(ctx, g,
//		ai.WithModelName("googleai/gemini-2.5-flash"),
//		ai.WithPrompt("Tell me a joke"),
//		ai.WithUse(sfgenkit.Middleware(retry.Middleware(cfg))),
//	)
//
// A streaming caller's callback receives the chunks of the attempt that
// committed only (its first chunk with content): a failed attempt's
// chunks never reach it, so the user never sees half an answer twice, as
// with Genkit's own Retry and Fallback middleware. Use one or the other:
// Genkit's Retry around this one multiplies the attempts.
//
// Errors are read as the retry rules expect: a provider's error beneath a
// Genkit status.Error (its HTTP status, Retry-After, provider code; Gemini's
// genai.APIError through providers/gemini) wins; else the error's Genkit
// status (RESOURCE_EXHAUSTED is a 429, UNAVAILABLE a 503, UNAUTHENTICATED a
// 401, INVALID_ARGUMENT a 400).
package genkit

import (
	"context"
	"errors"
	"fmt"

	"github.com/firebase/genkit/go/ai"
	gstatus "github.com/firebase/genkit/go/core/status"
	"google.golang.org/genai"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/providers/gemini"
	"github.com/steadfast-go/steadfast/retry"
)

// model is a Genkit model call as a core.Runnable: a model's Generate
// (FromModel), or the call a Middleware wraps.
type model struct {
	name     string
	generate func(context.Context, *ai.ModelRequest, ai.ModelStreamCallback) (*ai.ModelResponse, error)
}

// FromModel returns m as a core.Runnable over *ai.ModelRequest: Invoke
// returns the *ai.ModelResponse; Stream yields the *ai.ModelResponseChunk
// values as they come, then the *ai.ModelResponse as its last value (or
// the failure). A nil m makes a Runnable whose every call fails, not
// retryable, saying so.
func FromModel(m ai.Model) core.Runnable {
	if m == nil {
		return core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
			return nil, retry.Permanent(errors.New("genkit: FromModel: the model is nil"))
		})
	}
	return &model{name: m.Name(), generate: m.Generate}
}

// Name returns the model's registry name, the default operation of its
// calls.
func (g *model) Name() string { return g.name }

// Invoke calls the model without streaming.
func (g *model) Invoke(ctx context.Context, input any, _ ...core.Option) (any, error) {
	req, err := request(input)
	if err != nil {
		return nil, err
	}
	resp, err := g.generate(ctx, req, nil)
	if err != nil {
		return nil, adaptError(err)
	}
	observe(resp).Record(ctx)
	return resp, nil
}

// Batch makes one call per input, concurrently (bounded by
// core.WithMaxConcurrency).
func (g *model) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(g.Invoke).Batch(ctx, inputs, opts...)
}

// Stream calls the model with a callback that forwards its chunks.
func (g *model) Stream(ctx context.Context, input any, _ ...core.Option) (<-chan any, error) {
	req, err := request(input)
	if err != nil {
		return nil, err
	}
	return stream(ctx, func(ctx context.Context, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		resp, err := g.generate(ctx, req, cb)
		if err != nil {
			return nil, adaptError(err)
		}
		observe(resp).Record(ctx)
		return resp, nil
	}), nil
}

// observe returns what resp says of itself for the attempt span: its
// finish reason and, when the plugin reported it, its usage.
func observe(resp *ai.ModelResponse) *llmhttp.Response {
	var r llmhttp.Response
	if resp == nil {
		return &r
	}
	if resp.FinishReason != "" {
		r.FinishReasons = []string{string(resp.FinishReason)}
	}
	if u := resp.Usage; u != nil {
		r.HasUsage, r.InputTokens, r.OutputTokens = true, int64(u.InputTokens), int64(u.OutputTokens)
	}
	return &r
}

func request(input any) (*ai.ModelRequest, error) {
	if req, ok := input.(*ai.ModelRequest); ok && req != nil {
		return req, nil
	}
	return nil, retry.Permanent(fmt.Errorf("genkit: a model takes an *ai.ModelRequest, not %T", input))
}

// adaptError returns err, a Genkit model's failure, as the retry layer
// should read it: a provider's error beneath it as that provider's
// adapter reads it, else a Genkit status.Error's status as an HTTP status. Other
// errors are returned as they are.
func adaptError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[genai.APIError](err); ok {
		return gemini.AdaptError(err)
	}
	if hasStatus(err) {
		return err // an HTTP status beneath: the retry rules read it there
	}
	ge, ok := errors.AsType[*gstatus.Error](err)
	if !ok {
		return err
	}
	return llmhttp.Classify(&llmhttp.APIError{Status: ge.Status.HTTPCode(), Code: string(ge.Status), Err: err}, nil, ge.Message)
}

// hasStatus reports whether an error in err's chain carries an HTTP
// status the retry rules read (rule 5 of package retry's doc: a
// StatusCode() or HTTPStatusCode() method).
func hasStatus(err error) bool {
	_, ok := errors.AsType[interface {
		error
		StatusCode() int
	}](err)
	if !ok {
		_, ok = errors.AsType[interface {
			error
			HTTPStatusCode() int
		}](err)
	}
	return ok
}

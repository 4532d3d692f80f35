package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// Responses is a core.Runnable over OpenAI's Responses API. Invoke takes a
// string (one user message), the SDK's input items
// (responses.ResponseInputParam), or a responses.ResponseNewParams (its
// Model defaults to the Runnable's), and returns the SDK's
// *responses.Response. Stream yields the SDK's
// responses.ResponseStreamEventUnion values. It is safe for concurrent
// use.
//
// Without WithResumableStreams its streams are not resumable: Resume
// answers core.ErrNotResumable.
type Responses struct {
	client    oai.Client
	model     string
	resumable bool
	limits    llmhttp.RateLimitTracker
	// responseID is this Runnable's entry in each call's core.State: the
	// id of the background response its stream reads, for Resume. It is
	// durable, so a stream can resume in another process.
	responseID *core.StateKey[string]
}

// resumableStreams is the option WithResumableStreams returns: a request
// option that changes no request, which NewResponses recognises.
type resumableStreams struct{ option.RequestOption }

// WithResumableStreams, passed to NewResponses, makes its streams
// background responses that Resume can continue where they broke, from the
// sequence number of the last event delivered, and its Invokes background
// responses that it polls, so that an attempt after a dropped connection
// reads the response already made rather than pay for another (see
// Invoke).
//
// A background response is stored by OpenAI (store: true) and runs to its
// end on OpenAI's side whether or not anyone reads it: it is billed as any
// response, kept under OpenAI's retention for stored responses, and
// retrievable by its id meanwhile. Do not use it for data that must not be
// stored.
func WithResumableStreams() option.RequestOption {
	return resumableStreams{option.WithHeaderDel("X-Steadfast-Resumable-Streams")}
}

// NewResponses returns a Responses for model. opts configure the client as
// in oai.NewClient; the SDK's retries are off unless opts turn them back
// on with option.WithMaxRetries, and WithResumableStreams makes its
// streams resumable.
func NewResponses(model string, opts ...option.RequestOption) *Responses {
	r := &Responses{model: model, responseID: core.NewStateKey[string]("openai.responses.id")}
	client := []option.RequestOption{option.WithMaxRetries(0), observeLimits(&r.limits)}
	for _, o := range opts {
		if _, ok := o.(resumableStreams); ok {
			r.resumable = true
			continue
		}
		client = append(client, o)
	}
	r.client = oai.NewClient(client...)
	return r
}

// Name returns "openai.responses", the default operation of its calls.
func (r *Responses) Name() string { return "openai.responses" }

// CallAttributes returns the GenAI semantic-convention attributes of its
// calls, which a RetryRunnable puts on its call spans.
func (r *Responses) CallAttributes() []attribute.KeyValue {
	return []attribute.KeyValue{
		semconv.GenAIOperationNameChat,
		semconv.GenAIProviderNameKey.String(ProviderName),
		semconv.GenAIRequestModelKey.String(r.model),
	}
}

// Invoke makes one response and returns the SDK's *responses.Response. Its
// GenAI response attributes go on the span in ctx.
//
// With WithResumableStreams the response is made in background mode and
// polled to its end: an attempt after a dropped connection (under a retry
// layer, which keeps the call's core.State) polls the response already
// being made, rather than create and pay for another; a response the
// provider no longer knows is created once more (span event
// openai.responses.recreated); and the response is cancelled when the
// call's context ends before it does.
func (r *Responses) Invoke(ctx context.Context, input any, _ ...core.Option) (any, error) {
	params, err := r.params(input)
	if err != nil {
		return nil, err
	}
	var res *responses.Response
	ctx = llmhttp.Inference(ctx, r.CallAttributes()...) // the request leaves here (the polls are part of it)
	if r.resumable {
		res, err = r.invokeInBackground(ctx, params)
	} else {
		res, err = r.client.Responses.New(ctx, params)
		err = AdaptError(err)
	}
	if err != nil {
		return nil, err
	}
	if err := responseFailure(res); err != nil {
		return nil, err
	}
	rec := llmhttp.Response{}
	observeResponse(&rec, res)
	rec.Record(ctx)
	return res, nil
}

// Batch makes one response per input, concurrently (bounded by
// core.WithMaxConcurrency).
func (r *Responses) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(r.Invoke).Batch(ctx, inputs, opts...)
}

// Stream streams a response as the SDK's events. The lifecycle events
// before the first that carries output (response.created,
// response.in_progress, response.output_item.added,
// response.content_part.added, ...) are held back and delivered with it,
// so a retry layer commits at the first real token. An in-band failure (an
// error event, response.failed) is adapted like an HTTP error: before the
// first output it is the only value, and the attempt is retried where
// retryable; after it, it is the last value. response.incomplete is
// delivered like response.completed.
func (r *Responses) Stream(ctx context.Context, input any, _ ...core.Option) (<-chan any, error) {
	params, err := r.params(input)
	if err != nil {
		return nil, err
	}
	var st *core.State
	if r.resumable {
		params.Background, params.Store = param.NewOpt(true), param.NewOpt(true)
		st = core.StateFrom(ctx)
	}
	ctx = llmhttp.Inference(ctx, r.CallAttributes()...) // the request leaves here
	s := r.client.Responses.NewStreaming(ctx, params)
	if err := s.Err(); err != nil {
		_ = s.Close()
		return nil, AdaptError(err)
	}
	return r.pump(ctx, s, st, isOutput), nil
}

// Resume continues a background response's stream after last, the last
// event the consumer received, from its sequence number: the events that
// follow it, whole: GET /responses/{id}?stream=true&starting_after=N, as
// the API reference documents it. It answers core.ErrNotResumable without
// WithResumableStreams, for a stream it does not know (the call's
// core.State has no response id of this Runnable's), or when last is not
// one of its events.
func (r *Responses) Resume(ctx context.Context, _ any, last any, _ ...core.Option) (<-chan any, error) {
	ev, ok := last.(responses.ResponseStreamEventUnion)
	id, _ := r.responseID.Load(ctx)
	if !r.resumable || !ok || id == "" {
		return nil, fmt.Errorf("openai: responses: no background response to resume: %w", core.ErrNotResumable)
	}
	ctx = llmhttp.Inference(ctx, r.CallAttributes()...) // the request leaves here
	s := r.client.Responses.GetStreaming(ctx, id, responses.ResponseGetParams{StartingAfter: param.NewOpt(ev.SequenceNumber)},
		option.WithQuery("stream", "true"), option.WithMiddleware(getWithoutBody))
	if err := s.Err(); err != nil {
		_ = s.Close()
		return nil, AdaptError(err)
	}
	return r.pump(ctx, s, core.StateFrom(ctx), func(responses.ResponseStreamEventUnion) bool { return true }), nil
}

// getWithoutBody drops the JSON body that openai-go v3 sends with a GET
// ({"stream": true}): the stream is asked for in the query, as documented.
func getWithoutBody(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	if req.Method == http.MethodGet && req.Body != nil {
		req.Body, req.GetBody, req.ContentLength = http.NoBody, nil, 0
		req.Header.Del("Content-Type")
	}
	return next(req)
}

// RateLimits returns the rate limits the last response's headers gave
// (x-ratelimit-*), successes and failures alike (its RateLimits method).
func (r *Responses) RateLimits() (llmhttp.RateLimits, bool) { return r.limits.RateLimits() }

// CanResume reports whether its streams resume (with WithResumableStreams)
// and, for the stream of ctx's call, whether its response id is known.
func (r *Responses) CanResume(ctx context.Context) bool {
	if r.resumable && core.StateFrom(ctx) != nil {
		id, _ := r.responseID.Load(ctx)
		return id != ""
	}
	return r.resumable
}

// pump forwards an SDK stream of events; with st, the call's state, it
// remembers the response id there for Resume.
func (r *Responses) pump(ctx context.Context, s llmhttp.SDKStream[responses.ResponseStreamEventUnion], st *core.State,
	output func(responses.ResponseStreamEventUnion) bool) <-chan any {
	var rec llmhttp.Response
	return llmhttp.Pump(ctx, s, llmhttp.PumpConfig[responses.ResponseStreamEventUnion]{
		Content:  output,
		ToolCall: isToolCall,
		Adapt:    AdaptError,
		Fail:     inBandFailure,
		Observe: func(ev responses.ResponseStreamEventUnion) {
			if ev.Response.ID != "" {
				if st != nil {
					r.responseID.Store(ctx, ev.Response.ID)
				}
				observeResponse(&rec, &ev.Response)
			}
		},
		Done: func() { rec.Record(ctx) },
	})
}

// isToolCall reports an event of a function or tool call: an output item
// of that kind added, or its arguments' delta.
func isToolCall(ev responses.ResponseStreamEventUnion) bool {
	switch ev.Type {
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		return true
	case "response.output_item.added":
		return ev.Item.Type == "function_call" || ev.Item.Type == "custom_tool_call"
	}
	return false
}

// isOutput reports an event that carries output: a delta of text, a
// refusal, reasoning, a function call's or a tool's input, or the
// response's end (completed or incomplete), which delivers what was held.
func isOutput(ev responses.ResponseStreamEventUnion) bool {
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta",
		"response.reasoning_text.delta", "response.reasoning_summary_text.delta",
		"response.function_call_arguments.delta", "response.custom_tool_call_input.delta",
		"response.mcp_call_arguments.delta", "response.code_interpreter_call_code.delta",
		"response.audio.delta", "response.audio.transcript.delta",
		"response.completed", "response.incomplete":
		return true
	}
	return false
}

// inBandFailure returns the failure an error event or response.failed
// reports inside a 200 stream, adapted like an HTTP error, or nil.
func inBandFailure(ev responses.ResponseStreamEventUnion) error {
	switch ev.Type {
	case "error":
		return adaptCode(ev.Code, ev.Message)
	case "response.failed":
		return responseFailure(&ev.Response)
	}
	return nil
}

// responseFailure returns the failure of a response whose status is
// failed, or nil.
func responseFailure(res *responses.Response) error {
	switch res.Status {
	case responses.ResponseStatusFailed:
		return adaptCode(string(res.Error.Code), res.Error.Message)
	case responses.ResponseStatusCancelled:
		// Cancelled by someone else than this call: retrying would
		// make another response the canceller did not want.
		return retry.Permanent(fmt.Errorf("openai: responses: response %s was cancelled", res.ID))
	}
	return nil
}

// inBandStatus is the HTTP status an in-band error code stands for, where
// one does.
var inBandStatus = map[string]int{
	"rate_limit_exceeded": 429, "insufficient_quota": 429, "server_error": 500,
	"context_length_exceeded": 400, "invalid_prompt": 400,
}

// adaptCode adapts an in-band error: its code is the error.type; quota,
// billing and context-length codes are permanent, the others left to the
// status (an overload is retryable).
func adaptCode(code, message string) error {
	if message == "" {
		message = "the response failed"
	}
	a := apiError(inBandStatus[code], code, "", errors.New("OpenAI API error: "+message))
	a.Permanent = a.Permanent || code == "invalid_prompt"
	return llmhttp.Classify(a, nil, message)
}

// observeResponse gathers a response's attributes.
func observeResponse(r *llmhttp.Response, res *responses.Response) {
	r.ID, r.Model = res.ID, string(res.Model)
	if res.Status != "" && res.Status != responses.ResponseStatusInProgress && res.Status != responses.ResponseStatusQueued {
		r.FinishReasons = []string{string(res.Status)}
	}
	if res.JSON.Usage.Valid() {
		r.HasUsage, r.InputTokens, r.OutputTokens = true, res.Usage.InputTokens, res.Usage.OutputTokens
	}
}

// CheckResponse is CheckAnswer's counterpart for Responses, a ready-made
// RetryConfig.CheckOutput: a response cut at max_output_tokens or by the
// content filter is a permanent *llmhttp.AnswerError, and one with no text
// and no function call is a retryable one.
func CheckResponse(_ context.Context, _, output any) error {
	res, ok := output.(*responses.Response)
	if !ok {
		return &llmhttp.AnswerError{Kind: llmhttp.Empty}
	}
	if res.Status == responses.ResponseStatusIncomplete {
		switch reason := res.IncompleteDetails.Reason; reason {
		case "max_output_tokens":
			return &llmhttp.AnswerError{Kind: llmhttp.Truncated, FinishReason: reason}
		case "content_filter":
			return &llmhttp.AnswerError{Kind: llmhttp.Filtered, FinishReason: reason}
		}
	}
	if res.OutputText() != "" {
		return nil
	}
	for _, item := range res.Output {
		if item.Type == "function_call" {
			return nil
		}
	}
	return &llmhttp.AnswerError{Kind: llmhttp.Empty, FinishReason: string(res.Status)}
}

func (r *Responses) params(input any) (responses.ResponseNewParams, error) {
	switch v := input.(type) {
	case string:
		return responses.ResponseNewParams{Model: r.model, Input: responses.ResponseNewParamsInputUnion{OfString: param.NewOpt(v)}}, nil
	case responses.ResponseInputParam:
		return responses.ResponseNewParams{Model: r.model, Input: responses.ResponseNewParamsInputUnion{OfInputItemList: v}}, nil
	case responses.ResponseNewParams:
		if v.Model == "" {
			v.Model = r.model
		}
		return v, nil
	}
	return responses.ResponseNewParams{}, &inputError{input: input, what: "Responses takes a string, input items or ResponseNewParams"}
}

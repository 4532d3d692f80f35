package openai

import (
	"context"
	"errors"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// The polls of a background response: the first after pollFirst, each
// later one twice as long after the last, at most pollMax. Tests shorten
// them (export_test.go).
var (
	pollFirst = 250 * time.Millisecond
	pollMax   = 2 * time.Second
)

// cancelTimeout bounds the request that cancels a background response
// once the call that made it has ended.
const cancelTimeout = 5 * time.Second

// invokeInBackground makes an Invoke's response in background mode and
// polls it to its end. The response's id is kept in the call's core.State,
// so that an attempt after a dropped connection polls the response the
// provider is already making (and billing) rather than create another. A
// response the provider no longer knows (404 on a poll) is created once
// more, which the span in ctx records. When the call ends before the
// response does (the caller's cancellation or deadline, not an attempt's
// own timeout, after which the next attempt polls on), the response is
// cancelled.
func (r *Responses) invokeInBackground(ctx context.Context, params responses.ResponseNewParams) (*responses.Response, error) {
	params.Background, params.Store = param.NewOpt(true), param.NewOpt(true)
	id, _ := r.responseID.Load(ctx)
	for created := false; ; created = true {
		if id == "" {
			res, err := r.client.Responses.New(ctx, params)
			if err != nil {
				return nil, AdaptError(err)
			}
			if finished(res) {
				return res, nil
			}
			id = res.ID
			r.responseID.Store(ctx, id)
		}
		res, err := r.poll(ctx, id)
		if ae, ok := errors.AsType[*llmhttp.APIError](err); !ok || ae.StatusCode() != 404 || created {
			return res, err
		}
		// The provider forgot the response (its retention, another
		// region): the answer can only come from a new one.
		trace.SpanFromContext(ctx).AddEvent("openai.responses.recreated",
			trace.WithAttributes(attribute.String("openai.response.id", id)))
		id = ""
		r.responseID.Store(ctx, "")
	}
}

// poll reads the background response id until it has finished, waiting
// longer between polls as it goes on.
func (r *Responses) poll(ctx context.Context, id string) (*responses.Response, error) {
	t := time.NewTimer(pollFirst)
	defer t.Stop()
	for wait := pollFirst; ; wait = min(2*wait, pollMax) {
		select {
		case <-ctx.Done():
			r.cancelIfCallEnded(ctx, id)
			return nil, context.Cause(ctx)
		case <-t.C:
		}
		res, err := r.client.Responses.Get(ctx, id, responses.ResponseGetParams{}, option.WithMiddleware(getWithoutBody))
		if err != nil {
			if ctx.Err() != nil {
				r.cancelIfCallEnded(ctx, id)
				return nil, context.Cause(ctx)
			}
			return nil, AdaptError(err)
		}
		if finished(res) {
			return res, nil
		}
		t.Reset(min(2*wait, pollMax))
	}
}

// cancelIfCallEnded cancels the background response id when ctx ended
// for its call, not for an attempt's own timeout (retry's
// PerAttemptTimeout), after which the call goes on and polls it again. It
// forgets the id, so that nothing polls a cancelled response.
func (r *Responses) cancelIfCallEnded(ctx context.Context, id string) {
	if errors.Is(context.Cause(ctx), retry.ErrAttemptTimeout) {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	_, _ = r.client.Responses.Cancel(cctx, id) // best effort: the call has ended either way
	r.responseID.Store(ctx, "")
}

// finished reports whether a background response has ended: completed,
// incomplete, failed or cancelled.
func finished(res *responses.Response) bool {
	switch res.Status {
	case responses.ResponseStatusQueued, responses.ResponseStatusInProgress:
		return false
	}
	return true
}

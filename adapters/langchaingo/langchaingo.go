// Package langchaingo makes steadfast one import away for
// github.com/tmc/langchaingo: an llms.Model as a core.Runnable (FromModel),
// so retry, breaker, ratelimit, fallback and hedge wrap it, and a Runnable
// as an llms.Model (ToModel), so the wrapped model drops back into chains
// and agents unchanged.
//
// Invoke returns the model's *llms.ContentResponse, tool calls and
// generation info (usage) included. Stream runs the model with a streaming
// function: its text chunks are the stream's string values, and the final
// *llms.ContentResponse is its last value; empty chunks before the first
// text are not delivered, so a retry layer commits at the first real token.
// ToModel streams through the caller's streaming function: behind a retry
// layer it sees only the chunks of the attempt that committed, never those
// of an attempt that was retried.
//
// Notice: This package is EXPERIMENTAL and may be changed or removed in a
// later minor release: langchaingo is itself before v1 and changes its API, and
// this adapter changes with it (VERSIONING.md).
package langchaingo

import (
	"context"
	"errors"
	"fmt"

	"github.com/tmc/langchaingo/llms"

	"github.com/steadfast-go/steadfast/core"
)

type callOptionsKey struct{}

// WithCallOptions passes langchaingo call options (temperature, tools, max
// tokens, ...) to the model of a FromModel Runnable, through any
// decorators in between. ToModel passes its callers' options this way.
func WithCallOptions(opts ...llms.CallOption) core.Option {
	return core.NewOption(callOptionsKey{}, opts)
}

// ModelRunnable is an llms.Model as a core.Runnable. It is safe for
// concurrent use if the model is.
type ModelRunnable struct {
	m     llms.Model
	name  string
	adapt func(error) error
}

// Option configures a ModelRunnable.
type Option func(*ModelRunnable)

// WithName sets the Runnable's Name, the default operation of its calls.
func WithName(name string) Option { return func(r *ModelRunnable) { r.name = name } }

// WithErrorAdapter passes the model's errors through adapt, such as a
// provider's AdaptError, so that the retry layer classifies them.
func WithErrorAdapter(adapt func(error) error) Option {
	return func(r *ModelRunnable) {
		if adapt != nil {
			r.adapt = adapt
		}
	}
}

// FromModel returns m as a core.Runnable. It reports an error when m is
// nil.
func FromModel(m llms.Model, opts ...Option) (*ModelRunnable, error) {
	if m == nil {
		return nil, errors.New("langchaingo: FromModel: model is nil")
	}
	r := &ModelRunnable{m: m, name: "langchaingo.model", adapt: func(err error) error { return err }}
	for _, opt := range opts {
		if opt != nil {
			opt(r)
		}
	}
	return r, nil
}

// Name returns the Runnable's name.
func (r *ModelRunnable) Name() string { return r.name }

// Invoke calls GenerateContent; the input is a string (one human message)
// or []llms.MessageContent. It returns the *llms.ContentResponse.
func (r *ModelRunnable) Invoke(ctx context.Context, input any, opts ...core.Option) (any, error) {
	msgs, err := messages(input)
	if err != nil {
		return nil, err
	}
	callOpts := append(callOptions(opts), llms.WithStreamingFunc(nil)) // an Invoke never streams
	res, err := r.m.GenerateContent(ctx, msgs, callOpts...)
	if err != nil {
		return nil, r.adapt(err)
	}
	return res, nil
}

// Batch makes one call per input, concurrently (bounded by
// core.WithMaxConcurrency).
func (r *ModelRunnable) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(r.Invoke).Batch(ctx, inputs, opts...)
}

// Stream calls GenerateContent with a streaming function: each text chunk
// is a string value, then the final *llms.ContentResponse. A failure is the
// last value. The goroutine ends when the call returns; a consumer that
// cancels ctx stops the stream.
func (r *ModelRunnable) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	msgs, err := messages(input)
	if err != nil {
		return nil, err
	}
	ch := make(chan any)
	go func() {
		defer close(ch)
		stream := func(ctx context.Context, chunk []byte) error {
			if len(chunk) == 0 { // nothing a retry layer should commit on
				return nil
			}
			if !send(ctx, ch, string(chunk)) {
				return ctx.Err()
			}
			return nil
		}
		res, err := r.m.GenerateContent(ctx, msgs, append(callOptions(opts), llms.WithStreamingFunc(stream))...)
		switch {
		case ctx.Err() != nil:
		case err != nil:
			send(ctx, ch, r.adapt(err))
		default:
			send(ctx, ch, res)
		}
	}()
	return ch, nil
}

func callOptions(opts []core.Option) []llms.CallOption {
	o, _ := core.Lookup[[]llms.CallOption](opts, callOptionsKey{})
	return append([]llms.CallOption(nil), o...)
}

func messages(input any) ([]llms.MessageContent, error) {
	switch v := input.(type) {
	case string:
		return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, v)}, nil
	case []llms.MessageContent:
		return v, nil
	}
	return nil, &inputError{input: input}
}

// inputError is a call with an input the model cannot take: never retried.
type inputError struct{ input any }

func (e *inputError) Error() string {
	return fmt.Sprintf("langchaingo: a model takes a string or []llms.MessageContent, not %T", e.input)
}
func (e *inputError) Retryable() bool { return false }

// send delivers v on ch unless ctx ends first: the producer never blocks on
// a consumer that has gone.
func send(ctx context.Context, ch chan<- any, v any) bool {
	select {
	case ch <- v:
		return true
	case <-ctx.Done():
		return false
	}
}

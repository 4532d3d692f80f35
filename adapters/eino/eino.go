// Package eino makes steadfast one import away for github.com/cloudwego/eino:
// a chat model as a core.Runnable (FromChatModel), so retry, breaker,
// ratelimit, fallback and hedge wrap it, and a Runnable as an eino chat
// model (ToChatModel), so the wrapped model drops back into a graph, chain
// or agent unchanged, tool binding included; and the same both ways for
// tools (FromTool, ToTool).
//
// Invoke returns the model's *schema.Message (tool calls and response meta,
// usage included). Stream yields its *schema.Message chunks; chunks before
// the first with content, reasoning or a tool call are held back and
// delivered with it, so a retry layer commits at the first real token. The
// eino StreamReader is closed when the stream ends or the consumer cancels.
//
// Notice: This package is EXPERIMENTAL and may be changed or removed in a
// later minor release: eino is itself before v1 and changes its API, and
// this adapter changes with it (VERSIONING.md).
package eino

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
)

type modelOptionsKey struct{}

// WithModelOptions passes eino model options (tools, temperature, ...) to
// the model of a FromChatModel Runnable, through any decorators in between.
// ToChatModel passes its callers' options this way.
func WithModelOptions(opts ...model.Option) core.Option {
	return core.NewOption(modelOptionsKey{}, opts)
}

func modelOptions(opts []core.Option) []model.Option {
	o, _ := core.Lookup[[]model.Option](opts, modelOptionsKey{})
	return o
}

// Option configures what FromChatModel and FromTool return.
type Option func(*config)

type config struct {
	name       string
	adapt      func(error) error
	idempotent bool
}

// WithName sets the Runnable's Name, the default operation of its calls.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithErrorAdapter passes the model's errors through adapt, such as a
// provider's AdaptError, so that the retry layer classifies the errors of
// the framework's model implementations.
func WithErrorAdapter(adapt func(error) error) Option {
	return func(c *config) {
		if adapt != nil {
			c.adapt = adapt
		}
	}
}

// WithIdempotent states that a tool may be called twice with the same
// arguments without harm, so that a retry layer retries it. Tools are not
// idempotent unless told: the safe default.
func WithIdempotent() Option { return func(c *config) { c.idempotent = true } }

func configure(name string, opts []Option) config {
	c := config{name: name, adapt: func(err error) error { return err }}
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	return c
}

// ChatModelRunnable is an eino chat model as a core.Runnable.
type ChatModelRunnable struct {
	m   model.BaseChatModel
	cfg config
}

// FromChatModel returns m as a core.Runnable. It reports an error when m
// is nil.
func FromChatModel(m model.BaseChatModel, opts ...Option) (*ChatModelRunnable, error) {
	if m == nil {
		return nil, errors.New("eino: FromChatModel: model is nil")
	}
	return &ChatModelRunnable{m: m, cfg: configure("eino.chat_model", opts)}, nil
}

// Name returns the Runnable's name.
func (r *ChatModelRunnable) Name() string { return r.cfg.name }

// Invoke calls Generate; the input is []*schema.Message or a string (one
// user message). It returns the *schema.Message.
func (r *ChatModelRunnable) Invoke(ctx context.Context, input any, opts ...core.Option) (any, error) {
	msgs, err := messages(input)
	if err != nil {
		return nil, err
	}
	out, err := r.m.Generate(ctx, msgs, modelOptions(opts)...)
	if err != nil {
		return nil, r.cfg.adapt(err)
	}
	return out, nil
}

// Batch makes one call per input, concurrently (bounded by
// core.WithMaxConcurrency).
func (r *ChatModelRunnable) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(r.Invoke).Batch(ctx, inputs, opts...)
}

// Stream calls Stream and reads the eino StreamReader into the channel:
// io.EOF closes it, an error is its last value, and the reader is closed
// when the stream ends or ctx is done.
func (r *ChatModelRunnable) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	msgs, err := messages(input)
	if err != nil {
		return nil, err
	}
	sr, err := r.m.Stream(ctx, msgs, modelOptions(opts)...)
	if err != nil {
		return nil, r.cfg.adapt(err)
	}
	return llmhttp.Pump(ctx, &reader{sr: sr}, llmhttp.PumpConfig[*schema.Message]{
		Content:  hasContent,
		ToolCall: func(m *schema.Message) bool { return m != nil && len(m.ToolCalls) > 0 },
		Adapt:    r.cfg.adapt,
	}), nil
}

// hasContent reports a chunk with text, reasoning or a tool call.
func hasContent(m *schema.Message) bool {
	return m != nil && (m.Content != "" || m.ReasoningContent != "" || len(m.ToolCalls) > 0)
}

// reader is an eino StreamReader as the llmhttp.SDKStream Pump reads.
type reader struct {
	sr  *schema.StreamReader[*schema.Message]
	cur *schema.Message
	err error
}

func (r *reader) Next() bool {
	m, err := r.sr.Recv()
	switch {
	case errors.Is(err, io.EOF):
		return false
	case err != nil:
		r.err = err
		return false
	}
	r.cur = m
	return true
}

func (r *reader) Current() *schema.Message { return r.cur }
func (r *reader) Err() error               { return r.err }
func (r *reader) Close() error             { r.sr.Close(); return nil }

func messages(input any) ([]*schema.Message, error) {
	switch v := input.(type) {
	case string:
		return []*schema.Message{schema.UserMessage(v)}, nil
	case []*schema.Message:
		return v, nil
	}
	return nil, &inputError{what: "a chat model takes a string or []*schema.Message", input: input}
}

// inputError is a call with an input that cannot be sent: never retried.
type inputError struct {
	what  string
	input any
}

func (e *inputError) Error() string   { return fmt.Sprintf("eino: %s, not %T", e.what, e.input) }
func (e *inputError) Retryable() bool { return false }

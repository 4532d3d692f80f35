package eino

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/steadfast-go/steadfast/core"
)

// RunnableChatModel is a core.Runnable as an eino chat model (usually a
// FromChatModel Runnable wrapped in retry, breaker, fallback or hedge).
// WithTools binds tools by passing them to every call as model options,
// which the wrapped eino model receives; it is safe for concurrent use.
type RunnableChatModel struct {
	r     core.Runnable
	tools []*schema.ToolInfo
}

var _ model.ToolCallingChatModel = (*RunnableChatModel)(nil)

// ToChatModel returns r as an eino chat model. It reports an error when r
// is nil.
func ToChatModel(r core.Runnable) (*RunnableChatModel, error) {
	if r == nil {
		return nil, errors.New("eino: ToChatModel: Runnable is nil")
	}
	return &RunnableChatModel{r: r}, nil
}

// WithTools returns a chat model whose calls carry tools; m is unchanged.
func (m *RunnableChatModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return &RunnableChatModel{r: m.r, tools: slices.Clone(tools)}, nil
}

func (m *RunnableChatModel) pass(opts []model.Option) core.Option {
	if m.tools != nil {
		opts = append([]model.Option{model.WithTools(m.tools)}, opts...)
	}
	return WithModelOptions(opts...)
}

// Generate invokes the Runnable and returns its *schema.Message.
func (m *RunnableChatModel) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	out, err := m.r.Invoke(ctx, input, m.pass(opts))
	if err != nil {
		return nil, err
	}
	msg, ok := out.(*schema.Message)
	if !ok {
		return nil, fmt.Errorf("eino: the Runnable returned %T, not a *schema.Message", out)
	}
	return msg, nil
}

// Stream streams the Runnable into an eino StreamReader: its chunks, then
// its failure as the reader's error. Closing the reader stops the stream.
func (m *RunnableChatModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	ctx, cancel := context.WithCancel(ctx)
	ch, err := m.r.Stream(ctx, input, m.pass(opts))
	if err != nil {
		cancel()
		return nil, err
	}
	sr, sw := schema.Pipe[*schema.Message](0)
	go func() {
		defer cancel() // the consumer's Close, or the end: stop the producer
		defer sw.Close()
		for v := range ch {
			var closed bool
			switch v := v.(type) {
			case *schema.Message:
				closed = sw.Send(v, nil)
			case error:
				closed = sw.Send(nil, v)
			default:
				closed = sw.Send(nil, fmt.Errorf("eino: the stream yielded %T, not a *schema.Message", v))
			}
			if closed {
				return
			}
		}
	}()
	return sr, nil
}

package eino

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

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
//
// The stream is asked with core.WithResets, so a chain that can start a
// broken stream again (a retry layer's RestartStreams, a fallback's next
// candidate) does. A StreamReader cannot take back a chunk, and its
// reader joins them into the answer, so after a core.Reset the reader is
// given only what extends its text into the new answer: nothing until
// the new answer has repeated that text, then the rest. When the new
// answer says something else, the reader ends with the failure that
// broke the stream, as it would without the restart.
func (m *RunnableChatModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	ctx, cancel := context.WithCancel(ctx)
	ch, err := m.r.Stream(ctx, input, m.pass(opts), core.WithResets())
	if err != nil {
		cancel()
		return nil, err
	}
	sr, sw := schema.Pipe[*schema.Message](0)
	go func() {
		defer cancel() // the consumer's Close, or the end: stop the producer
		defer sw.Close()
		var again restart
		for v := range ch {
			var closed bool
			switch v := v.(type) {
			case core.Reset:
				again.reset(v)
			case *schema.Message:
				msg, err := again.next(v)
				if msg == nil && err == nil {
					continue
				}
				closed = sw.Send(msg, err) || err != nil
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

// restart follows a stream across core.Resets for a reader that keeps
// every chunk it was given: once a Reset voids them, the new answer's
// chunks are held until its text has repeated the reader's, and only
// the rest is passed on.
type restart struct {
	had, now strings.Builder // the reader's text; the new answer's, since the last Reset
	holding  bool            // a Reset came and the new answer has not repeated had yet
	cause    error           // what broke the stream, for a new answer that differs
}

func (r *restart) reset(v core.Reset) {
	r.now.Reset()
	r.holding, r.cause = true, v.Cause
}

// next returns the chunk to pass on for msg (nil when it is held), or
// the failure that ends the reader when the new answer differs.
func (r *restart) next(msg *schema.Message) (*schema.Message, error) {
	if !r.holding {
		r.had.WriteString(msg.Content)
		return msg, nil
	}
	r.now.WriteString(msg.Content)
	had, now := r.had.String(), r.now.String()
	switch {
	case len(msg.ToolCalls) > 0 || msg.ReasoningContent != "" || !strings.HasPrefix(now, had) && !strings.HasPrefix(had, now):
		return nil, fmt.Errorf("eino: the stream broke, and its restart answered differently from what the reader has: %w", r.cause)
	case len(now) <= len(had):
		return nil, nil // still repeating what the reader has
	}
	out := *msg
	out.Content = now[len(had):]
	r.holding = false
	r.had.WriteString(out.Content)
	return &out, nil
}

package langchaingo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/steadfast-go/steadfast/core"
)

// RunnableModel is a core.Runnable as an llms.Model: usually a FromModel
// Runnable wrapped in retry, breaker, fallback or hedge.
type RunnableModel struct {
	r core.Runnable
}

var _ llms.Model = (*RunnableModel)(nil)

// ToModel returns r as an llms.Model. It reports an error when r is nil.
func ToModel(r core.Runnable) (*RunnableModel, error) {
	if r == nil {
		return nil, errors.New("langchaingo: ToModel: Runnable is nil")
	}
	return &RunnableModel{r: r}, nil
}

// GenerateContent invokes the Runnable, or streams it when the options set
// a streaming function: the function gets the stream's text chunks, which,
// behind a retry layer, are those of the attempt that committed only. The
// options reach the model through WithCallOptions.
func (m *RunnableModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var co llms.CallOptions
	for _, o := range options {
		o(&co)
	}
	pass := WithCallOptions(options...)
	if co.StreamingFunc == nil {
		out, err := m.r.Invoke(ctx, msgs, pass)
		if err != nil {
			return nil, err
		}
		return response(out)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the stream when the streaming function fails
	ch, err := m.r.Stream(ctx, msgs, pass)
	if err != nil {
		return nil, err
	}
	var text strings.Builder
	var final *llms.ContentResponse
	for v := range ch {
		switch v := v.(type) {
		case error:
			return nil, v
		case *llms.ContentResponse:
			final = v
		case string:
			text.WriteString(v)
			if err := co.StreamingFunc(ctx, []byte(v)); err != nil {
				return nil, err
			}
		}
	}
	if final == nil { // a Runnable that streams text only
		final = &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: text.String()}}}
	}
	return final, nil
}

// Call generates a completion for a single prompt.
func (m *RunnableModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// response returns an Invoke output as a *llms.ContentResponse: the
// model's own, or a string as one choice.
func response(out any) (*llms.ContentResponse, error) {
	switch v := out.(type) {
	case *llms.ContentResponse:
		return v, nil
	case string:
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: v}}}, nil
	}
	return nil, fmt.Errorf("langchaingo: the Runnable returned %T, not a *llms.ContentResponse", out)
}

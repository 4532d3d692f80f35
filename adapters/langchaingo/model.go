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
//
// The stream is asked with core.WithResets, so a chain that can start a
// broken stream again (a retry layer's RestartStreams, a fallback's next
// candidate) does: the response returned is the restarted answer, whole,
// and the text streamed before the core.Reset is discarded from it. A
// streaming function cannot take back what it was given, so after a
// restart it is given only what extends its text into the new answer:
// nothing until the new answer has repeated that text, and nothing more
// if it says something else. What it saw is then a part of an answer
// that was voided; the response returned is the one to keep.
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
	ch, err := m.r.Stream(ctx, msgs, pass, core.WithResets())
	if err != nil {
		return nil, err
	}
	var text strings.Builder
	var final *llms.ContentResponse
	var streamed string // after a restart, the text the streaming function has
	restarted := false  // until the new answer has repeated streamed
	for v := range ch {
		switch v := v.(type) {
		case error:
			return nil, v
		case core.Reset:
			if !restarted {
				streamed = text.String()
			}
			text.Reset()
			final, restarted = nil, true
		case *llms.ContentResponse:
			final = v
		case string:
			text.WriteString(v)
			if restarted {
				if v = beyond(text.String(), streamed); v == "" {
					continue
				}
				restarted = false
			}
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

// beyond returns the part of answer past streamed, when answer goes on
// from streamed; else "".
func beyond(answer, streamed string) string {
	if len(answer) <= len(streamed) || !strings.HasPrefix(answer, streamed) {
		return ""
	}
	return answer[len(streamed):]
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

package openai

import (
	"context"

	"github.com/openai/openai-go/v3/packages/param"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// RepairOverflow is a ready RetryConfig.Repair for Chat: when a call
// failed because the request needs more tokens than the model's context
// window, or than a per-minute token limit, holds ("maximum context
// length is 128000 tokens. However, you requested 130532 tokens (126532 in
// the messages, 4000 in the completion)", or the 429 "Request too large …
// Limit 30000, Requested 45000"), it lowers the request's output limit
// (max_completion_tokens, or max_tokens when that is the one set) by what
// the request went over. It gives up when nothing fits: the input alone
// fills the window, or the request set no output limit and the message
// gave none. Any input Chat takes is accepted; a repaired one is
// ChatCompletionNewParams.
func (c *Chat) RepairOverflow(_ context.Context, input any, err error) (any, bool) {
	o, ok := llmhttp.ParseOverflow(err)
	if !ok {
		return nil, false
	}
	p, perr := c.params(input)
	if perr != nil {
		return nil, false
	}
	cur := p.MaxCompletionTokens
	if !cur.Valid() {
		cur = p.MaxTokens
	}
	n, ok := o.FitOutput(int(cur.Or(0)))
	if !ok {
		return nil, false
	}
	if p.MaxTokens.Valid() && !p.MaxCompletionTokens.Valid() {
		p.MaxTokens = param.NewOpt(int64(n))
	} else {
		p.MaxCompletionTokens = param.NewOpt(int64(n))
	}
	return p, true
}

// RepairOverflow is Chat.RepairOverflow for Responses: it lowers
// max_output_tokens. A repaired input is ResponseNewParams.
func (r *Responses) RepairOverflow(_ context.Context, input any, err error) (any, bool) {
	o, ok := llmhttp.ParseOverflow(err)
	if !ok {
		return nil, false
	}
	p, perr := r.params(input)
	if perr != nil {
		return nil, false
	}
	n, ok := o.FitOutput(int(p.MaxOutputTokens.Or(0)))
	if !ok {
		return nil, false
	}
	p.MaxOutputTokens = param.NewOpt(int64(n))
	return p, true
}

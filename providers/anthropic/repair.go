package anthropic

import (
	"context"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// RepairOverflow is a ready RetryConfig.Repair for Messages: when a call
// failed because its input and max_tokens exceed the model's context
// window ("input length and `max_tokens` exceed context limit: 197202 +
// 21333 > 200000"), it lowers max_tokens to what fits (2798 there). It
// gives up when nothing fits: the prompt alone is too long ("prompt is
// too long: 208451 tokens > 200000 maximum"). Any input Messages takes is
// accepted; a repaired one is MessageNewParams.
func (m *Messages) RepairOverflow(_ context.Context, input any, err error) (any, bool) {
	o, ok := llmhttp.ParseOverflow(err)
	if !ok {
		return nil, false
	}
	p, perr := m.params(input)
	if perr != nil {
		return nil, false
	}
	n, ok := o.FitOutput(int(p.MaxTokens))
	if !ok {
		return nil, false
	}
	p.MaxTokens = int64(n)
	return p, true
}

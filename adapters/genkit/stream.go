package genkit

import (
	"context"
	"errors"

	"github.com/firebase/genkit/go/ai"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// stream forwards the chunks generate's callback receives, then its
// response, or its failure, as the last value, through llmhttp.Pump:
// chunks before the first with content are held back and sent with it,
// so that a retry layer commits at the first real token. The callback is
// pulled as an iterator, so nothing runs once the stream ends: when ctx is
// done or the consumer stops, the callback refuses the next chunk and the
// model stops.
func stream(ctx context.Context, generate func(context.Context, ai.ModelStreamCallback) (*ai.ModelResponse, error)) <-chan any {
	seq := func(yield func(any, error) bool) {
		stopped := false
		resp, err := generate(ctx, func(_ context.Context, c *ai.ModelResponseChunk) error {
			if stopped = !yield(c, nil); stopped {
				return errStopped
			}
			return nil
		})
		switch {
		case stopped:
		case err != nil:
			yield(nil, err)
		default:
			yield(resp, nil)
		}
	}
	return llmhttp.PumpSeq(ctx, seq, llmhttp.PumpConfig[any]{
		Content:  hasContent,
		ToolCall: hasToolRequest,
		Adapt:    func(err error) error { return err }, // generate's errors are adapted already
	})
}

// errStopped tells the model its stream's consumer is gone.
var errStopped = errors.New("genkit: the stream was stopped")

// hasToolRequest reports a chunk with a request to run a tool.
func hasToolRequest(v any) bool {
	c, ok := v.(*ai.ModelResponseChunk)
	if !ok || c == nil {
		return false
	}
	for _, p := range c.Content {
		if p.IsToolRequest() {
			return true
		}
	}
	return false
}

// hasContent reports a chunk with a part (text, a tool request, media),
// or the response, which is the answer.
func hasContent(v any) bool {
	switch v := v.(type) {
	case *ai.ModelResponseChunk:
		return v != nil && len(v.Content) > 0
	case *ai.ModelResponse:
		return true
	}
	return false
}

package genkit

import (
	"context"

	"github.com/firebase/genkit/go/ai"

	"github.com/steadfast-go/steadfast/internal/streams"
)

// stream runs generate on a goroutine of its own, forwarding the chunks
// its callback receives, and then its response, or its failure, as the
// last value. Chunks before the first with content are held back and
// sent with it, so that a retry layer commits at the first real token.
// The goroutine ends when generate returns: the callback refuses every
// chunk once ctx is done, and the model stops.
func stream(ctx context.Context, generate func(context.Context, ai.ModelStreamCallback) (*ai.ModelResponse, error)) <-chan any {
	ch := make(chan any)
	go func() {
		defer close(ch)
		var held []any // chunks before the first with content
		committed := false
		resp, err := generate(ctx, func(_ context.Context, c *ai.ModelResponseChunk) error {
			if !committed && !hasContent(c) {
				held = append(held, c)
				return nil
			}
			committed = true
			for _, v := range held {
				if !streams.Send(ctx, ch, v) {
					return ctx.Err()
				}
			}
			held = nil
			if !streams.Send(ctx, ch, c) {
				return ctx.Err()
			}
			return nil
		})
		if err != nil {
			streams.Send(ctx, ch, err)
			return
		}
		streams.Send(ctx, ch, resp)
	}()
	return ch
}

// hasContent reports a chunk with a part: text, a tool request, media.
func hasContent(c *ai.ModelResponseChunk) bool { return c != nil && len(c.Content) > 0 }

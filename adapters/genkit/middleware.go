package genkit

import (
	"context"
	"errors"
	"fmt"

	"github.com/firebase/genkit/go/ai"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// Middleware returns a Genkit middleware, for ai.WithUse or a plugin,
// that runs every model call of a Generate through the chain of mw
// (retry, fallback, pool, …; the first is the outermost) around the model
// call Genkit was about to make. The chain is built once, here, and
// shared by every Generate: a retry budget or a breaker inside it sees
// them all. A streaming caller's callback receives only the chunks of the
// attempt that committed, and of a restart: the chain is streamed with
// core.WithResets, and when it starts the answer again (a retry layer's
// RestartStreams, a fallback's next candidate) the first chunk of the new
// answer reaches the callback marked Aggregated, Genkit's word for a
// chunk that holds all the data before it: what the callback had is
// replaced. The response returned is the restarted answer's.
//
// Under a fallback, the other candidates are Runnables over
// *ai.ModelRequest: FromModel of another Genkit model, say.
func Middleware(mw ...core.Middleware) ai.Middleware {
	chain := core.Chain(&model{name: "genkit.model", generate: wrapped}, mw...)
	return ai.MiddlewareFunc(func(context.Context) (*ai.Hooks, error) {
		return &ai.Hooks{WrapModel: func(ctx context.Context, p *ai.ModelParams, n ai.ModelNext) (*ai.ModelResponse, error) {
			ctx = context.WithValue(ctx, nextKey{}, n)
			if p.Callback == nil {
				out, err := chain.Invoke(ctx, p.Request)
				if err != nil {
					return nil, err
				}
				return response(out)
			}
			return forward(ctx, chain, p)
		}}, nil
	})
}

// forward streams the chain and passes the chunks of the attempt that
// committed to the caller's callback; the stream's last value is the
// response, or the failure.
func forward(ctx context.Context, chain core.Runnable, p *ai.ModelParams) (*ai.ModelResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := chain.Stream(ctx, p.Request, core.WithResets())
	if err != nil {
		return nil, err
	}
	defer func() { // the stream's goroutine ends once its channel is drained
		cancel()
		for range ch {
		}
	}()
	var resp *ai.ModelResponse
	restarted := false // a core.Reset came: the next chunk replaces what the callback had
	for v := range ch {
		switch v := v.(type) {
		case core.Reset:
			restarted, resp = true, nil
		case *ai.ModelResponseChunk:
			if restarted {
				c := *v
				c.Aggregated, v, restarted = true, &c, false
			}
			if err := p.Callback(ctx, v); err != nil {
				return nil, err
			}
		case *ai.ModelResponse:
			resp = v
		case error:
			return nil, v
		default:
			return nil, fmt.Errorf("genkit: the chain streamed %T, not model chunks and a response", v)
		}
	}
	if resp == nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("genkit: the chain's stream ended without a response")
	}
	return resp, nil
}

func response(out any) (*ai.ModelResponse, error) {
	if resp, ok := out.(*ai.ModelResponse); ok {
		return resp, nil
	}
	return nil, fmt.Errorf("genkit: the chain answered %T, not *ai.ModelResponse", out)
}

// nextKey carries, in an attempt's context, the model call Genkit was
// about to make.
type nextKey struct{}

// wrapped makes the model call Genkit was about to make, from ctx: the
// innermost call of a Middleware's chain.
func wrapped(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	n, ok := ctx.Value(nextKey{}).(ai.ModelNext)
	if !ok {
		return nil, retry.Permanent(errors.New("genkit: the model call was not in the context: run the chain through Middleware"))
	}
	return n(ctx, &ai.ModelParams{Request: req, Callback: cb})
}

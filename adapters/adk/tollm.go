package adk

import (
	"context"
	"fmt"
	"iter"

	"google.golang.org/adk/v2/model"

	"github.com/steadfast-go/steadfast/core"
)

// runnableLLM is a Runnable chain as an ADK model.
type runnableLLM struct {
	r    core.Runnable
	name string
}

// ToLLM returns r, a chain whose input is a *model.LLMRequest and whose
// outputs are *model.LLMResponse (FromLLM's, under retry, fallback, pool
// …), as an ADK model named name, for an llmagent. GenerateContent with
// stream false calls Invoke; with stream true, Stream, yielding each
// response as it comes and a failure as the last error. A caller that
// stops early stops the stream: nothing outlives the call.
//
// The stream is asked with core.WithResets: when the chain starts it
// again (a retry layer's RestartStreams, a fallback's next candidate), the
// responses yielded so far are voided, and GenerateContent yields a
// partial response marked Interrupted before the new ones. ADK's runner
// keeps only the final, non-partial response, which is the restarted
// answer's; a UI showing the partial text clears it at the interruption.
func ToLLM(r core.Runnable, name string) model.LLM {
	return &runnableLLM{r: r, name: name}
}

// Name returns the name ToLLM was given.
func (l *runnableLLM) Name() string { return l.name }

// GenerateContent runs the chain on req.
func (l *runnableLLM) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		if l.r == nil {
			yield(nil, fmt.Errorf("adk: ToLLM(%q): the Runnable is nil", l.name))
			return
		}
		if !stream {
			out, err := l.r.Invoke(ctx, req)
			if err != nil {
				yield(nil, err)
				return
			}
			resp, err := response(out)
			yield(resp, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ch, err := l.r.Stream(ctx, req, core.WithResets())
		if err != nil {
			yield(nil, err)
			return
		}
		defer func() { // the stream's goroutine ends once its channel is drained
			cancel()
			for range ch {
			}
		}()
		for v := range ch {
			switch v := v.(type) {
			case error:
				yield(nil, v)
				return
			case core.Reset:
				if !yield(&model.LLMResponse{Partial: true, Interrupted: true}, nil) {
					return
				}
				continue
			}
			resp, err := response(v)
			if !yield(resp, err) || err != nil {
				return
			}
		}
	}
}

// response is a chain's output as an ADK response.
func response(v any) (*model.LLMResponse, error) {
	if resp, ok := v.(*model.LLMResponse); ok {
		return resp, nil
	}
	return nil, fmt.Errorf("adk: the chain answered %T, not *model.LLMResponse", v)
}

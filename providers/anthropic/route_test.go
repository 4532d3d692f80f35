package anthropic_test

import (
	"net/http"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/steadfast-go/steadfast/chaos"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/anthropic"
)

// A primary that cannot serve is sent one request and the fallback
// answers, through anthropic-sdk-go (see llmhttptest.CheckRoutes).
func TestAPrimaryThatCannotServeIsTriedOnce(t *testing.T) {
	llmhttptest.CheckRoutes(t, llmhttptest.Routes{
		New: func(c *http.Client) core.Runnable {
			return anthropic.NewMessages(model, option.WithAPIKey("test-key"), option.WithBaseURL("http://anthropic.test/"), option.WithHTTPClient(c))
		},
		Text:         anthropic.Text,
		Answer:       message("Hello from the fallback"),
		StreamAnswer: llmhttptest.SSE(start(), delta("Hello from the fallback"), stop()),
		Overflow:     chaos.ContextOverflow(200000, 197202, 21333),
	})
}

// A stream that breaks after its first chunk starts again, for a caller
// that accepts resets, through anthropic-sdk-go (see
// llmhttptest.CheckRestarts).
func TestABrokenStreamRestarts(t *testing.T) {
	llmhttptest.CheckRestarts(t, restarts(t))
}

// In the GenAI conventions' mode each request is an inference span of its
// own (see llmhttptest.CheckInference).
func TestInferenceSpans(t *testing.T) {
	llmhttptest.CheckInference(t, restarts(t), "chat "+model)
}

// restarts is the provider for the llmhttptest checks.
func restarts(t *testing.T) llmhttptest.Restarts {
	return llmhttptest.Restarts{
		New: func(c *http.Client) core.Runnable {
			return anthropic.NewMessages(model, option.WithAPIKey("test-key"), option.WithBaseURL("http://anthropic.test/"), option.WithHTTPClient(c))
		},
		Text:  anthropic.Text,
		Start: []string{start()},
		Token: delta,
		End:   []string{stop()},
		ToolCall: event("content_block_start",
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"charge_card","input":{}}}`),
	}
}

package gemini_test

import (
	"net/http"
	"testing"

	"github.com/steadfast-go/steadfast/chaos"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/gemini"
)

// A primary that cannot serve is sent one request and the fallback
// answers, through genai (see llmhttptest.CheckRoutes). genai creates its
// stream before it sends the request.
func TestAPrimaryThatCannotServeIsTriedOnce(t *testing.T) {
	llmhttptest.CheckRoutes(t, llmhttptest.Routes{
		New:          func(c *http.Client) core.Runnable { return newModels(t, c) },
		Text:         gemini.Text,
		Answer:       ok("Hello from the fallback"),
		StreamAnswer: llmhttptest.SSE(response("", ""), response("Hello from the fallback", "STOP")),
		Overflow:     chaos.ContextOverflow(1048576, 1054016, 0),
	})
}

// A stream that breaks after its first chunk starts again, for a caller
// that accepts resets, through genai (see llmhttptest.CheckRestarts).
func TestABrokenStreamRestarts(t *testing.T) {
	llmhttptest.CheckRestarts(t, restarts(t))
}

// In the GenAI conventions' mode each request is an inference span of its
// own (see llmhttptest.CheckInference).
func TestInferenceSpans(t *testing.T) {
	llmhttptest.CheckInference(t, restarts(t), "generate_content "+model)
}

// restarts is the provider for the llmhttptest checks.
func restarts(t *testing.T) llmhttptest.Restarts {
	return llmhttptest.Restarts{
		New:      func(c *http.Client) core.Runnable { return newModels(t, c) },
		Text:     gemini.Text,
		Token:    func(text string) string { return response(text, "") },
		End:      []string{response("", "STOP")},
		ToolCall: `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"charge_card","args":{}}}]},"index":0}]}`,
	}
}

package openai_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3/option"

	"github.com/steadfast-go/steadfast/chaos"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/openai"
)

// A primary that cannot serve is sent one request and the fallback
// answers, through openai-go (see llmhttptest.CheckRoutes).
func TestAPrimaryThatCannotServeIsTriedOnce(t *testing.T) {
	llmhttptest.CheckRoutes(t, llmhttptest.Routes{
		New: func(c *http.Client) core.Runnable {
			return openai.NewChat(model, option.WithAPIKey("test-key"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(c))
		},
		Text:         openai.Text,
		Answer:       completion("Hello from the fallback"),
		StreamAnswer: llmhttptest.SSE(chunk("Hello from the fallback"), "[DONE]"),
		Overflow:     chaos.ContextOverflow(128000, 126000, 4000),
	})
}

// A stream that breaks after its first chunk starts again, for a caller
// that accepts resets, through openai-go (see llmhttptest.CheckRestarts).
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
			return openai.NewChat(model, option.WithAPIKey("test-key"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(c))
		},
		Text:  openai.Text,
		Token: chunk,
		End:   []string{"[DONE]"},
		ToolCall: fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":%q,"choices":[{"index":0,"delta":`+
			`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"charge_card","arguments":""}}]}}]}`, model),
	}
}

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

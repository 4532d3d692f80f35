package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	ant "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/anthropic"
	"github.com/steadfast-go/steadfast/retry"
)

// sentMessages is the messages of a request body the server received.
type sentMessages []struct {
	Role    string `json:"role"`
	Content []struct {
		Type      string `json:"type"`
		Text      string `json:"text"`
		ToolUseID string `json:"tool_use_id"`
		IsError   bool   `json:"is_error"`
		Content   any    `json:"content"`
	} `json:"content"`
}

func messagesOf(t *testing.T, body string) sentMessages {
	t.Helper()
	var req struct {
		Messages sentMessages `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	return req.Messages
}

// reaskThrough invokes "Find Go docs" through a retry layer over Messages
// of srv, whose check is check and whose re-ask is Reask.
func reaskThrough(t *testing.T, srv *llmhttptest.Server, check func(context.Context, any, any) error) (any, error) {
	cfg := retry.RetryConfig{MaxRetries: 1, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, CheckOutput: check,
		NextInput: func(_ context.Context, in any, err error) any {
			out, _, _ := retry.RejectedOutput(err)
			return anthropic.Reask(in, out, err)
		}}
	r, err := retry.New(messagesOn(srv), cfg, retry.WithTracerProvider(nil))
	if err != nil {
		t.Fatal(err)
	}
	return r.Invoke(t.Context(), "Find Go docs")
}

var errUnknownTool = errors.New(`no tool "serch"; the tools are search, fetch`)

// knownTools rejects a tool call of a tool that does not exist.
func knownTools(_ context.Context, _, out any) error {
	for _, b := range out.(*ant.Message).Content {
		if b.Type == "tool_use" && b.Name != "search" && b.Name != "fetch" {
			return errUnknownTool
		}
	}
	return nil
}

// A tool call the check rejects goes back as the assistant's turn and a
// tool_result with is_error, whose text says what was wrong: the request
// ends on the user turn the API requires after a tool_use.
func TestReaskAnswersARejectedToolCallWithAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := llmhttptest.New(messageWith(`[{"type":"tool_use","id":"tu_7","name":"serch","input":{"q":"go"}}]`, "tool_use"),
			messageWith(`[{"type":"tool_use","id":"tu_8","name":"search","input":{"q":"go"}}]`, "tool_use"))
		if _, err := reaskThrough(t, srv, knownTools); err != nil {
			t.Fatal(err)
		}
		msgs := messagesOf(t, srv.Bodies()[1])
		if len(msgs) != 3 || msgs[0].Role != "user" || msgs[1].Role != "assistant" || msgs[1].Content[0].Type != "tool_use" {
			t.Fatalf("re-ask messages %+v, want the question, the rejected tool call, and the answer to it", msgs)
		}
		last := msgs[2]
		if last.Role != "user" || len(last.Content) != 1 || last.Content[0].Type != "tool_result" ||
			last.Content[0].ToolUseID != "tu_7" || !last.Content[0].IsError || !strings.Contains(fmt.Sprint(last.Content[0].Content), `no tool "serch"`) {
			t.Errorf("re-ask's last turn %+v, want a user turn of a tool_result for tu_7 with is_error and the check's words", last)
		}
	})
}

// A rejected answer that was cut at max_tokens is re-asked saying so,
// never blindly; with CheckAnswer it is not re-asked at all.
func TestReaskSaysTheAnswerWasCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := llmhttptest.New(messageWith(`[{"type":"text","text":"{\"docs\": [\"go.dev"}]`, "max_tokens"),
			messageWith(`[{"type":"text","text":"{\"docs\": []}"}]`, "end_turn"))
		notJSON := func(_ context.Context, _, out any) error {
			if !json.Valid([]byte(out.(*ant.Message).Content[0].Text)) {
				return errors.New("not valid JSON")
			}
			return nil
		}
		if _, err := reaskThrough(t, srv, notJSON); err != nil {
			t.Fatal(err)
		}
		msgs := messagesOf(t, srv.Bodies()[1])
		last := msgs[len(msgs)-1]
		if last.Role != "user" || !strings.Contains(last.Content[0].Text, "not valid JSON") || !strings.Contains(last.Content[0].Text, "cut off at the output token limit (finish reason max_tokens)") {
			t.Errorf("re-ask's last turn %+v, want a user turn saying the check's words and the cut", last)
		}

		cut := llmhttptest.New(messageWith(`[{"type":"text","text":"{\"docs\""}]`, "max_tokens"), messageWith(`[{"type":"text","text":"unreachable"}]`, "end_turn"))
		_, err := reaskThrough(t, cut, anthropic.CheckAnswer)
		if cut.Requests() != 1 || err == nil {
			t.Errorf("with CheckAnswer a cut answer made %d requests (%v), want 1 and the failure", cut.Requests(), err)
		}
	})
}

// Reask never modifies its input, and keeps a MessageNewParams' settings.
func TestReaskKeepsTheParams(t *testing.T) {
	in := ant.MessageNewParams{Model: "claude-x", MaxTokens: 99, Messages: []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock("q"))}}
	out, ok := anthropic.Reask(in, &ant.Message{Role: "assistant"}, errors.New("bad")).(ant.MessageNewParams)
	if !ok || out.MaxTokens != 99 || len(out.Messages) != 3 || len(in.Messages) != 1 {
		t.Errorf("Reask() = %+v, want the params with 3 messages and the input's 1 untouched", out)
	}
}

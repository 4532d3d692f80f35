package anthropic_test

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/providers/anthropic"
)

func messageWith(content, stopReason string) llmhttptest.Reply {
	return llmhttptest.JSON(200, fmt.Sprintf(`{"id":"msg_9","type":"message","role":"assistant","model":"claude-x-2025",
		"content":%s,"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":21,"output_tokens":8}}`, content, stopReason))
}

const toolUse = `[{"type":"tool_use","id":"tu_1","name":"search","input":{"q":"go"}}]`

func TestInvokeReturnsTheFullMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, messageWith(toolUse, "tool_use"))
		out, err := h.R.Invoke(t.Context(), "q")
		msg, ok := out.(*ant.Message)
		if err != nil || !ok {
			t.Fatalf("Invoke() = %T, %v, want an *ant.Message", out, err)
		}
		if msg.Usage.InputTokens != 21 || msg.Usage.OutputTokens != 8 || msg.StopReason != ant.StopReasonToolUse ||
			len(msg.Content) != 1 || msg.Content[0].Name != "search" {
			t.Errorf("message = %+v, want usage 21/8, stop tool_use, the search tool use", msg)
		}
		a := h.AttemptSpans()[0]
		for k, v := range map[string]string{"gen_ai.response.id": "msg_9", "gen_ai.response.model": "claude-x-2025",
			"gen_ai.response.finish_reasons": `["tool_use"]`, "gen_ai.usage.input_tokens": "21", "gen_ai.usage.output_tokens": "8"} {
			if a[k] != v {
				t.Errorf("attempt span %s = %q, want %q", k, a[k], v)
			}
		}
	})
}

func blockStart() string {
	return event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
}

func messageDelta() string {
	return event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`)
}

// A stream that failed after message_start and an empty text block, but
// before any text, did not commit: it is retried, and the consumer gets the
// second stream's events whole, usage and stop reason included.
func TestStreamCommitsAtTheFirstRealEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t,
			llmhttptest.SSE(start(), blockStart(), event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)),
			llmhttptest.SSE(start(), blockStart(), delta("Hel"), delta("lo"), messageDelta(), stop()))
		ch, err := h.R.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		var events []ant.MessageStreamEventUnion
		text := ""
		for v := range ch {
			ev, ok := v.(ant.MessageStreamEventUnion)
			if !ok {
				t.Fatalf("value %v (%T), want an ant.MessageStreamEventUnion", v, v)
			}
			events = append(events, ev)
			text += anthropic.Text(ev)
		}
		if len(events) != 6 || events[0].Type != "message_start" || text != "Hello" {
			t.Fatalf("events = %d (first %q), text %q, want 6 from message_start, Hello", len(events), events[0].Type, text)
		}
		if md := events[4]; md.Delta.StopReason != "end_turn" || md.Usage.OutputTokens != 2 {
			t.Errorf("message_delta = %+v, want end_turn and 2 output tokens", md)
		}
		if h.Server.Requests() != 2 {
			t.Errorf("HTTP requests = %d, want 2", h.Server.Requests())
		}
		as := h.AttemptSpans()
		if a := as[len(as)-1]; a["gen_ai.usage.output_tokens"] != "2" || a["gen_ai.usage.input_tokens"] != "3" || a["gen_ai.response.finish_reasons"] != `["end_turn"]` {
			t.Errorf("committed attempt span = %v, want usage 3/2 and end_turn", a)
		}
	})
}

func TestCheckAnswer(t *testing.T) {
	for name, tc := range map[string]struct {
		reply     llmhttptest.Reply
		kind      string
		retryable bool
	}{
		"truncated": {messageWith(`[{"type":"text","text":"half"}]`, "max_tokens"), llmhttp.Truncated, false},
		"refused":   {messageWith(`[]`, "refusal"), llmhttp.Filtered, false},
		"empty":     {messageWith(`[{"type":"text","text":""}]`, "end_turn"), llmhttp.Empty, true},
		"tool use":  {messageWith(toolUse, "tool_use"), "", false},
		"fine":      {messageWith(`[{"type":"text","text":"Hi"}]`, "end_turn"), "", false},
	} {
		t.Run(name, func(t *testing.T) {
			srv := llmhttptest.New(tc.reply)
			m := anthropic.NewMessages(model, option.WithAPIKey("k"), option.WithBaseURL("http://anthropic.test/"), option.WithHTTPClient(srv.Client()))
			out, err := m.Invoke(t.Context(), "q")
			if err != nil {
				t.Fatal(err)
			}
			err = anthropic.CheckAnswer(t.Context(), "q", out)
			ae, ok := errors.AsType[*llmhttp.AnswerError](err)
			switch {
			case tc.kind == "" && err != nil:
				t.Errorf("CheckAnswer() = %v, want nil", err)
			case tc.kind != "" && (!ok || ae.Kind != tc.kind || ae.Retryable() != tc.retryable):
				t.Errorf("CheckAnswer() = %v, want a %s AnswerError, retryable %v", err, tc.kind, tc.retryable)
			}
		})
	}
}

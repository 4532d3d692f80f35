package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// reaskOver invokes "Find Go docs" through a retry layer over r whose
// check is check and whose re-ask is openai.Reask.
func reaskOver(t *testing.T, r core.Runnable, check func(context.Context, any, any) error) (any, error) {
	t.Helper()
	cfg := retry.RetryConfig{MaxRetries: 1, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, CheckOutput: check,
		NextInput: func(_ context.Context, in any, err error) any {
			out, _, _ := retry.RejectedOutput(err)
			return openai.Reask(in, out, err)
		}}
	rr, err := retry.New(r, cfg, retry.WithTracerProvider(nil))
	if err != nil {
		t.Fatal(err)
	}
	return rr.Invoke(t.Context(), "Find Go docs")
}

func withTool(name, finish string) llmhttptest.Reply {
	return llmhttptest.JSON(200, fmt.Sprintf(`{"id":"c1","object":"chat.completion","created":1,"model":%q,
		"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"id":"call_7","type":"function","function":{"name":%q,"arguments":"{}"}}]},"finish_reason":%q,"logprobs":null}],
		"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`, model, name, finish))
}

var errNoSuchTool = errors.New(`no tool "serch"`)

// A Chat answer the check rejects is re-asked with the assistant's turn,
// a tool message for each of its tool calls, and a user turn last.
func TestReaskChatEndsOnAUserTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := llmhttptest.New(withTool("serch", "tool_calls"), withTool("search", "tool_calls"))
		chat := openai.NewChat(model, option.WithAPIKey("k"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(srv.Client()))
		check := func(_ context.Context, _, out any) error {
			if out.(*oai.ChatCompletion).Choices[0].Message.ToolCalls[0].Function.Name != "search" {
				return errNoSuchTool
			}
			return nil
		}
		if _, err := reaskOver(t, chat, check); err != nil {
			t.Fatal(err)
		}
		var req struct {
			Messages []struct {
				Role       string `json:"role"`
				Content    any    `json:"content"`
				ToolCallID string `json:"tool_call_id"`
			} `json:"messages"`
		}
		if err := json.Unmarshal([]byte(srv.Bodies()[1]), &req); err != nil {
			t.Fatal(err)
		}
		roles := []string{}
		for _, m := range req.Messages {
			roles = append(roles, m.Role)
		}
		last := req.Messages[len(req.Messages)-1]
		if strings.Join(roles, ",") != "user,assistant,tool,user" || req.Messages[2].ToolCallID != "call_7" ||
			!strings.Contains(fmt.Sprint(last.Content), `no tool "serch"`) {
			t.Errorf("re-ask roles %v (tool call id %q), last %v; want user,assistant,tool,user answering call_7 with the check's words", roles, req.Messages[2].ToolCallID, last.Content)
		}
	})
}

// A Chat answer cut at its length is re-asked saying so.
func TestReaskChatSaysTheAnswerWasCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cut := llmhttptest.JSON(200, fmt.Sprintf(`{"id":"c1","object":"chat.completion","created":1,"model":%q,
			"choices":[{"index":0,"message":{"role":"assistant","content":"{\"docs\": [","refusal":null},"finish_reason":"length","logprobs":null}],
			"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`, model))
		srv := llmhttptest.New(cut, completion(`{"docs": []}`))
		chat := openai.NewChat(model, option.WithAPIKey("k"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(srv.Client()))
		notJSON := func(_ context.Context, _, out any) error {
			if !json.Valid([]byte(out.(*oai.ChatCompletion).Choices[0].Message.Content)) {
				return errors.New("not valid JSON")
			}
			return nil
		}
		if _, err := reaskOver(t, chat, notJSON); err != nil {
			t.Fatal(err)
		}
		if body := srv.Bodies()[1]; !strings.Contains(body, "cut off at the output token limit (finish reason length)") {
			t.Errorf("re-ask %s, want it to say the answer was cut off", body)
		}
	})
}

// A Responses answer the check rejects is re-asked after it, by its id:
// its function call answered with the check's words, a user turn last.
func TestReaskResponsesFollowsTheRejectedResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := llmhttptest.JSON(200, `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-test",
			"output":[{"type":"function_call","id":"fc_1","call_id":"call_9","name":"serch","arguments":"{}","status":"completed"}],
			"parallel_tool_calls":true,"tool_choice":"auto","tools":[]}`)
		second := llmhttptest.JSON(200, `{"id":"resp_2","object":"response","created_at":1,"status":"completed","model":"gpt-test",
			"output":[{"type":"function_call","id":"fc_2","call_id":"call_10","name":"search","arguments":"{}","status":"completed"}],
			"parallel_tool_calls":true,"tool_choice":"auto","tools":[]}`)
		srv := llmhttptest.New(first, second)
		r := openai.NewResponses(model, option.WithAPIKey("k"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(srv.Client()))
		check := func(_ context.Context, _, out any) error {
			if out.(*responses.Response).Output[0].Name != "search" {
				return errNoSuchTool
			}
			return nil
		}
		if _, err := reaskOver(t, r, check); err != nil {
			t.Fatal(err)
		}
		var req struct {
			Previous string `json:"previous_response_id"`
			Input    []struct {
				Type    string `json:"type"`
				Role    string `json:"role"`
				CallID  string `json:"call_id"`
				Output  string `json:"output"`
				Content any    `json:"content"`
			} `json:"input"`
		}
		if err := json.Unmarshal([]byte(srv.Bodies()[1]), &req); err != nil {
			t.Fatal(err)
		}
		if req.Previous != "resp_1" || len(req.Input) != 2 || req.Input[0].Type != "function_call_output" || req.Input[0].CallID != "call_9" ||
			!strings.Contains(req.Input[0].Output, `no tool "serch"`) || req.Input[1].Role != "user" {
			t.Errorf("re-ask %s; want after resp_1, call_9's output with the check's words, then a user turn", srv.Bodies()[1])
		}
	})
}

// With store: false the rejected response cannot be referred to by its id:
// its function call is sent again before its output and the user turn,
// and the input's items are left as they were.
func TestReaskResponsesWithoutStoreSendsTheAnswerAgain(t *testing.T) {
	var res responses.Response
	if err := json.Unmarshal([]byte(`{"id":"resp_1","object":"response","status":"completed","model":"m",
		"output":[{"type":"function_call","id":"fc_1","call_id":"call_9","name":"serch","arguments":"{}","status":"completed"}]}`), &res); err != nil {
		t.Fatal(err)
	}
	in := responses.ResponseNewParams{Store: param.NewOpt(false),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Find Go docs", responses.EasyInputMessageRoleUser)}}}
	out, ok := openai.Reask(in, &res, errNoSuchTool).(responses.ResponseNewParams)
	if !ok || out.PreviousResponseID.Valid() || len(in.Input.OfInputItemList) != 1 {
		t.Fatalf("Reask() = %+v, want params with no previous response and the input untouched", out)
	}
	items := out.Input.OfInputItemList
	if len(items) != 4 || items[1].OfFunctionCall == nil || items[2].OfFunctionCallOutput == nil || items[3].OfMessage == nil {
		t.Errorf("Reask() items %+v, want the question, the call, its output, a user turn", items)
	}
}

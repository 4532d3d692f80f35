package openai_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// completionWith is a completion with a finish reason, usage and a tool
// call when tool is set.
func completionWith(text, finish string, tool bool) llmhttptest.Reply {
	calls := ""
	if tool {
		calls = `,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"q\":\"go\"}"}}]`
	}
	return llmhttptest.JSON(200, fmt.Sprintf(`{"id":"c9","object":"chat.completion","created":1,"model":"gpt-4o-mini-2024",
		"choices":[{"index":0,"message":{"role":"assistant","content":%q%s},"finish_reason":%q}],
		"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46}}`, text, calls, finish))
}

func TestInvokeReturnsTheFullResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, completionWith("", "tool_calls", true))
		out, err := h.R.Invoke(t.Context(), "q")
		res, ok := out.(*oai.ChatCompletion)
		if err != nil || !ok {
			t.Fatalf("Invoke() = %T, %v, want a *oai.ChatCompletion", out, err)
		}
		c := res.Choices[0]
		if res.Usage.PromptTokens != 12 || res.Usage.CompletionTokens != 34 || c.FinishReason != "tool_calls" ||
			len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Name != "search" || res.ID != "c9" {
			t.Errorf("response = %+v, want usage 12/34, finish tool_calls, one search tool call, id c9", res)
		}
		attempt := h.AttemptSpans()[0]
		for k, v := range map[string]string{"gen_ai.response.id": "c9", "gen_ai.response.model": "gpt-4o-mini-2024",
			"gen_ai.response.finish_reasons": `["tool_calls"]`, "gen_ai.usage.input_tokens": "12", "gen_ai.usage.output_tokens": "34"} {
			if attempt[k] != v {
				t.Errorf("attempt span %s = %q, want %q", k, attempt[k], v)
			}
		}
	})
}

func roleChunk() string {
	return `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`
}

func finishChunk(reason string) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":%q}]}`, reason)
}

func usageChunk() string {
	return `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`
}

// A stream whose only chunk before its failure was the role-only one did
// not commit: it is retried, and the consumer sees the second stream
// whole, its role chunk first, up to the usage chunk.
func TestStreamCommitsAtTheFirstRealChunk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t,
			llmhttptest.SSE(roleChunk(), `{"error":{"message":"overloaded","type":"server_error","code":null}}`),
			llmhttptest.SSE(roleChunk(), chunk("Hel"), chunk("lo"), finishChunk("stop"), usageChunk(), "[DONE]"))
		ch, err := h.R.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		var chunks []oai.ChatCompletionChunk
		for v := range ch {
			c, ok := v.(oai.ChatCompletionChunk)
			if !ok {
				t.Fatalf("value %v (%T), want an oai.ChatCompletionChunk", v, v)
			}
			chunks = append(chunks, c)
		}
		if len(chunks) != 5 || openai.Text(chunks[1])+openai.Text(chunks[2]) != "Hello" {
			t.Fatalf("chunks = %d, want 5: role, Hel, lo, finish, usage", len(chunks))
		}
		if last := chunks[4]; last.Usage.PromptTokens != 5 || last.Usage.CompletionTokens != 2 || chunks[3].Choices[0].FinishReason != "stop" {
			t.Errorf("finish and usage chunks = %+v, %+v, want stop and 5/2", chunks[3], last)
		}
		if h.Server.Requests() != 2 {
			t.Errorf("HTTP requests = %d, want 2", h.Server.Requests())
		}
		attempts := h.AttemptSpans()
		if a := attempts[len(attempts)-1]; a["gen_ai.usage.output_tokens"] != "2" || a["gen_ai.response.finish_reasons"] != `["stop"]` {
			t.Errorf("committed attempt span = %v, want usage and finish reason", a)
		}
	})
}

func TestStreamAsksForUsage(t *testing.T) {
	srv := llmhttptest.New(llmhttptest.SSE(chunk("x"), "[DONE]"))
	chat := openai.NewChat(model, optionsFor(srv)...)
	ch, err := chat.Stream(t.Context(), "q")
	if err != nil {
		t.Fatal(err)
	}
	for range ch {
	}
	if body := srv.Bodies()[0]; !strings.Contains(body, `"include_usage":true`) {
		t.Errorf("request body = %s, want stream_options.include_usage", body)
	}
}

func TestCheckAnswer(t *testing.T) {
	for name, tc := range map[string]struct {
		reply     llmhttptest.Reply
		kind      string
		retryable bool
	}{
		"truncated": {completionWith("half an ans", "length", false), llmhttp.Truncated, false},
		"filtered":  {completionWith("", "content_filter", false), llmhttp.Filtered, false},
		"empty":     {completionWith("", "stop", false), llmhttp.Empty, true},
		"tool call": {completionWith("", "tool_calls", true), "", false},
		"fine":      {completionWith("Hello", "stop", false), "", false},
	} {
		t.Run(name, func(t *testing.T) {
			srv := llmhttptest.New(tc.reply)
			out, err := openai.NewChat(model, optionsFor(srv)...).Invoke(t.Context(), "q")
			if err != nil {
				t.Fatal(err)
			}
			err = openai.CheckAnswer(t.Context(), "q", out)
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

// A truncated answer under retry with the ready-made check: not retried.
func TestCheckAnswerUnderRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := llmhttptest.New(completionWith("half", "length", false))
		cfg := llmhttptest.Config
		cfg.CheckOutput = openai.CheckAnswer
		r, err := retry.New(openai.NewChat(model, optionsFor(srv)...), cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Invoke(t.Context(), "q")
		if re, ok := errors.AsType[*retry.Error](err); !ok || re.Outcome != retry.OutcomeNotRetryable || srv.Requests() != 1 {
			t.Errorf("Invoke() error = %v after %d requests, want not_retryable after 1", err, srv.Requests())
		}
	})
}

// optionsFor points a client at srv, with no retries of the SDK's own.
func optionsFor(srv *llmhttptest.Server) []option.RequestOption {
	return []option.RequestOption{option.WithAPIKey("test-key"), option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(srv.Client())}
}

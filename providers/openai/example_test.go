package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

func ExampleNewChat() {
	// A stand-in for the API; drop WithBaseURL and set OPENAI_API_KEY to
	// call the real one.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini",
			"choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()

	chat := openai.NewChat("gpt-4o-mini", option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("key"))
	r, err := retry.New(chat, retry.DefaultRetryConfig())
	if err != nil {
		panic(err)
	}
	out, err := r.Invoke(context.Background(), "Say hello")
	fmt.Println(openai.Text(out), err)
	// Output: Hello! <nil>
}

func ExampleAdaptError() {
	quota := &oai.Error{StatusCode: 429, Code: "insufficient_quota", Type: "insufficient_quota"}
	err := openai.AdaptError(quota)
	var verdict interface{ Retryable() bool }
	fmt.Println(errors.As(err, &verdict) && !verdict.Retryable(), errors.Is(err, quota))
	// Output: true true
}

func ExampleChat_RepairOverflow() {
	// A stand-in for the API: a request asking for more output than the
	// context window leaves fails with OpenAI's context_length_exceeded.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			MaxCompletionTokens int `json:"max_completion_tokens"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/json")
		if body.MaxCompletionTokens > 1468 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, you requested 130532 tokens (126532 in the messages, 4000 in the completion).","type":"invalid_request_error","code":"context_length_exceeded"}}`)
			return
		}
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o",
			"choices":[{"index":0,"message":{"role":"assistant","content":"answered in at most %d tokens"},"finish_reason":"stop"}]}`, body.MaxCompletionTokens)
	}))
	defer srv.Close()

	chat := openai.NewChat("gpt-4o", option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("key"))
	cfg := retry.DefaultRetryConfig()
	cfg.Repair = chat.RepairOverflow // lower the output limit to what fits, at once
	r, err := retry.New(chat, cfg)
	if err != nil {
		panic(err)
	}
	out, err := r.Invoke(context.Background(), oai.ChatCompletionNewParams{
		Messages:            []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Summarize this long document")},
		MaxCompletionTokens: oai.Int(4000),
	})
	fmt.Println(openai.Text(out), err)
	// Output: answered in at most 1468 tokens <nil>
}

// Reask makes the re-ask of a Chat or Responses answer a check rejected:
// the answer, its tool calls answered with what was wrong, and a user turn
// last that says it.
func ExampleReask() {
	cfg := retry.DefaultRetryConfig()
	cfg.CheckOutput = openai.CheckAnswer
	cfg.NextInput = func(_ context.Context, in any, err error) any {
		out, _, _ := retry.RejectedOutput(err)
		return openai.Reask(in, out, err)
	}
	r, err := retry.New(openai.NewChat("gpt-4.1-mini"), cfg)
	if err != nil {
		panic(err)
	}
	_ = r // r.Invoke(ctx, "...")
}

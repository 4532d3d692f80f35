package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/steadfast-go/steadfast/providers/anthropic"
	"github.com/steadfast-go/steadfast/retry"
)

func ExampleNewMessages() {
	// A stand-in for the API; drop WithBaseURL and set ANTHROPIC_API_KEY to
	// call the real one.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5",
			"content":[{"type":"text","text":"Hello!"}],"stop_reason":"end_turn","stop_sequence":null,
			"usage":{"input_tokens":3,"output_tokens":1}}`)
	}))
	defer srv.Close()

	msgs := anthropic.NewMessages("claude-haiku-4-5", option.WithBaseURL(srv.URL), option.WithAPIKey("key"))
	r, err := retry.New(msgs, retry.DefaultRetryConfig())
	if err != nil {
		panic(err)
	}
	out, err := r.Invoke(context.Background(), "Say hello")
	fmt.Println(anthropic.Text(out), err)
	// Output: Hello! <nil>
}

func ExampleMessages_RepairOverflow() {
	// A stand-in for the API: the input and max_tokens together exceed
	// the context window.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			MaxTokens int `json:"max_tokens"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/json")
		if body.MaxTokens > 2798 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"type":"error","error":{"type":"invalid_request_error","message":"input length and max_tokens exceed context limit: 197202 + 21333 > 200000, decrease input length or max_tokens and try again"}}`)
			return
		}
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
			"content":[{"type":"text","text":"answered in at most %d tokens"}],"stop_reason":"end_turn","stop_sequence":null,
			"usage":{"input_tokens":197202,"output_tokens":9}}`, body.MaxTokens)
	}))
	defer srv.Close()

	msgs := anthropic.NewMessages("claude-sonnet-4-5", option.WithBaseURL(srv.URL), option.WithAPIKey("key"))
	cfg := retry.DefaultRetryConfig()
	cfg.Repair = msgs.RepairOverflow // lower max_tokens to what fits, at once
	r, err := retry.New(msgs, cfg)
	if err != nil {
		panic(err)
	}
	out, err := r.Invoke(context.Background(), ant.MessageNewParams{
		MaxTokens: 21333,
		Messages:  []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock("Summarize this long document"))},
	})
	fmt.Println(anthropic.Text(out), err)
	// Output: answered in at most 2798 tokens <nil>
}

func ExampleReask() {
	// A stand-in for the API: the first answer is not JSON; the re-ask,
	// which ends on a user turn saying why, gets JSON.
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls++
		text := "Sure! The capital is Paris."
		if calls > 1 {
			text = `{\"capital\": \"Paris\"}`
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-5",
			"content":[{"type":"text","text":"%s"}],"stop_reason":"end_turn","stop_sequence":null,
			"usage":{"input_tokens":12,"output_tokens":9}}`, calls, text)
	}))
	defer srv.Close()

	cfg := retry.DefaultRetryConfig()
	cfg.InitialBackoff = time.Millisecond // a re-ask need not wait long
	cfg.CheckOutput = func(_ context.Context, _, out any) error {
		if !json.Valid([]byte(anthropic.Text(out))) {
			return fmt.Errorf("the answer is not JSON")
		}
		return nil
	}
	cfg.NextInput = func(_ context.Context, in any, err error) any {
		out, _, _ := retry.RejectedOutput(err)
		return anthropic.Reask(in, out, err) // the answer, then "Your previous answer was rejected: ..."
	}
	r, err := retry.New(anthropic.NewMessages("claude-sonnet-4-5", option.WithBaseURL(srv.URL), option.WithAPIKey("key")), cfg)
	if err != nil {
		panic(err)
	}
	out, err := r.Invoke(context.Background(), "What is the capital of France? Answer as JSON.")
	fmt.Println(anthropic.Text(out), err, calls)
	// Output: {"capital": "Paris"} <nil> 2
}

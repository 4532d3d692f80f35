package anthropic_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

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

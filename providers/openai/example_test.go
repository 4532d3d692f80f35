package openai_test

import (
	"context"
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

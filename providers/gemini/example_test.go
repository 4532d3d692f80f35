package gemini_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"google.golang.org/genai"

	"github.com/steadfast-go/steadfast/providers/gemini"
	"github.com/steadfast-go/steadfast/retry"
)

func ExampleNew() {
	// A stand-in for the Gemini API, so the example runs anywhere.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello!"}]},"finishReason":"STOP"}],
			"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2}}`)
	}))
	defer srv.Close()

	models, err := gemini.New(context.Background(), "gemini-2.5-flash", genai.ClientConfig{
		APIKey: "key", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL + "/"},
	})
	if err != nil {
		panic(err)
	}
	cfg := retry.DefaultRetryConfig()
	cfg.CheckOutput = gemini.CheckAnswer // truncated or blocked: stop; empty: retry
	r, err := retry.New(models, cfg)
	if err != nil {
		panic(err)
	}
	out, err := r.Invoke(context.Background(), "Say hello")
	res := out.(*genai.GenerateContentResponse)
	fmt.Println(gemini.Text(out), res.UsageMetadata.CandidatesTokenCount, err)
	// Output: Hello! 2 <nil>
}

func ExampleAdaptError() {
	daily := genai.APIError{Code: 429, Status: "RESOURCE_EXHAUSTED", Details: []map[string]any{{
		"@type":      "type.googleapis.com/google.rpc.QuotaFailure",
		"violations": []any{map[string]any{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}},
	}}}
	err := gemini.AdaptError(daily)
	var verdict interface{ Retryable() bool }
	fmt.Println(errors.As(err, &verdict) && !verdict.Retryable())
	// Output: true
}

// Reask makes the re-ask of an answer a check rejected: the model's turn,
// then a user turn (Gemini refuses a request that ends on the model's)
// that says what was wrong, its function calls answered with it.
func ExampleReask() {
	cfg := retry.DefaultRetryConfig()
	cfg.CheckOutput = gemini.CheckAnswer
	cfg.NextInput = func(_ context.Context, in any, err error) any {
		out, _, _ := retry.RejectedOutput(err)
		return gemini.Reask(in, out, err)
	}
	_ = cfg // retry.New(models, cfg)
}

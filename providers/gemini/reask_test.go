package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/genai"

	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/gemini"
	"github.com/steadfast-go/steadfast/retry"
)

// sentContents is the contents of a generateContent request body.
type sentContents []struct {
	Role  string `json:"role"`
	Parts []struct {
		Text             string `json:"text"`
		FunctionCall     any    `json:"functionCall"`
		FunctionResponse *struct {
			Name     string         `json:"name"`
			Response map[string]any `json:"response"`
		} `json:"functionResponse"`
	} `json:"parts"`
}

func reaskThrough(t *testing.T, srv *llmhttptest.Server, check func(context.Context, any, any) error) error {
	t.Helper()
	cfg := retry.RetryConfig{MaxRetries: 1, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, CheckOutput: check,
		NextInput: func(_ context.Context, in any, err error) any {
			out, _, _ := retry.RejectedOutput(err)
			return gemini.Reask(in, out, err)
		}}
	r, err := retry.New(newModels(t, srv.Client()), cfg, retry.WithTracerProvider(nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Invoke(t.Context(), "Find Go docs")
	return err
}

func contentsOf(t *testing.T, body string) sentContents {
	t.Helper()
	var req struct {
		Contents sentContents `json:"contents"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	return req.Contents
}

// A rejected answer is re-asked with the model's turn and a user turn
// last (a request ending on a model turn is refused by Gemini); a
// rejected function call is answered with a function response carrying
// the check's words.
func TestReaskEndsOnAUserTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		call := llmhttptest.JSON(200, `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"serch","args":{"q":"go"}}}]},"finishReason":"STOP","index":0}],
			"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":3,"totalTokenCount":10},"modelVersion":"gemini-2.5-flash-001","responseId":"resp-1"}`)
		srv := llmhttptest.New(call, ok("fine"))
		check := func(_ context.Context, _, out any) error {
			for _, p := range out.(*genai.GenerateContentResponse).Candidates[0].Content.Parts {
				if p.FunctionCall != nil && p.FunctionCall.Name != "search" {
					return errors.New(`no tool "serch"`)
				}
			}
			return nil
		}
		if err := reaskThrough(t, srv, check); err != nil {
			t.Fatal(err)
		}
		cs := contentsOf(t, srv.Bodies()[1])
		if len(cs) != 3 || cs[1].Role != "model" || cs[2].Role != "user" {
			t.Fatalf("re-ask contents %+v, want user, model, user", cs)
		}
		fr := cs[2].Parts[0].FunctionResponse
		if fr == nil || fr.Name != "serch" || !strings.Contains(fmt.Sprint(fr.Response["error"]), `no tool "serch"`) ||
			!strings.Contains(cs[2].Parts[1].Text, `no tool "serch"`) {
			t.Errorf("re-ask's user turn %+v, want a function response with the check's words, then the words", cs[2])
		}
	})
}

// An answer cut at MAX_TOKENS is re-asked saying so.
func TestReaskSaysTheAnswerWasCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := llmhttptest.New(llmhttptest.JSON(200, response(`{"docs": [`, "MAX_TOKENS")), ok(`{"docs": []}`))
		notJSON := func(_ context.Context, _, out any) error {
			if !json.Valid([]byte(out.(*genai.GenerateContentResponse).Text())) {
				return errors.New("not valid JSON")
			}
			return nil
		}
		if err := reaskThrough(t, srv, notJSON); err != nil {
			t.Fatal(err)
		}
		cs := contentsOf(t, srv.Bodies()[1])
		if last := cs[len(cs)-1]; last.Role != "user" || !strings.Contains(last.Parts[0].Text, "cut off at the output token limit (finish reason MAX_TOKENS)") {
			t.Errorf("re-ask's last turn %+v, want a user turn saying the answer was cut off", last)
		}
	})
}

package llmhttp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// A re-ask says what the check said, and what happened to an answer that
// did not end on its own: never a blind "try again".
func TestReaskTextSaysWhatHappened(t *testing.T) {
	why := errors.New("the answer is not JSON")
	for _, tc := range []struct {
		finish *llmhttp.AnswerError
		want   string
	}{
		{nil, "Your previous answer was rejected: the answer is not JSON. Answer again."},
		{&llmhttp.AnswerError{Kind: llmhttp.Truncated, FinishReason: "length"}, "cut off at the output token limit (finish reason length)"},
		{&llmhttp.AnswerError{Kind: llmhttp.Filtered, FinishReason: "content_filter"}, "stopped by the content filter (finish reason content_filter)"},
	} {
		if got := llmhttp.ReaskText(why, tc.finish); !strings.Contains(got, tc.want) || !strings.Contains(got, why.Error()) {
			t.Errorf("ReaskText(%v) = %q, want it to say %q and the check's words", tc.finish, got, tc.want)
		}
	}
}

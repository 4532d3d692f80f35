package gemini

import (
	"context"
	"slices"

	"google.golang.org/genai"

	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// Reask is a ready RetryConfig.NextInput for Models, given the answer a
// check rejected (retry.RejectedOutput): the contents of input, the
// rejected candidate as the model's turn, and a user turn last, which
// Gemini requires, saying what was wrong (llmhttp.ReaskText: the check's
// error, and a MAX_TOKENS or blocked finish). A function call the check
// rejected is answered in that turn with a function response whose error
// is that text. A string or []*genai.Content input gives
// []*genai.Content, a Request the same Request with the new contents;
// input is never modified. An output that is not a response adds the
// user turn alone.
func Reask(input, output any, err error) any {
	var req Request
	switch v := input.(type) {
	case string:
		req.Contents = genai.Text(v)
	case []*genai.Content:
		req.Contents = v
	case Request:
		req = v
	default:
		return input
	}
	contents := slices.Clone(req.Contents)
	text := llmhttp.ReaskText(reasonOf(err), nil)
	var turn []*genai.Part
	if res, ok := output.(*genai.GenerateContentResponse); ok && len(res.Candidates) > 0 && res.Candidates[0].Content != nil {
		if ae, ok := CheckAnswer(context.Background(), nil, res).(*llmhttp.AnswerError); ok && ae.Kind != llmhttp.Empty {
			text = llmhttp.ReaskText(reasonOf(err), ae)
		}
		model := *res.Candidates[0].Content
		model.Role = genai.RoleModel
		contents = append(contents, &model)
		for _, p := range model.Parts {
			if p.FunctionCall != nil {
				turn = append(turn, &genai.Part{FunctionResponse: &genai.FunctionResponse{
					ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Response: map[string]any{"error": text}}})
			}
		}
	}
	turn = append(turn, &genai.Part{Text: text})
	contents = append(contents, &genai.Content{Role: genai.RoleUser, Parts: turn})
	if _, ok := input.(Request); ok {
		req.Contents = contents
		return req
	}
	return contents
}

// reasonOf is what a re-ask says was wrong: the check's own error, when
// err is a rejection.
func reasonOf(err error) error {
	if _, reason, ok := retry.RejectedOutput(err); ok {
		return reason
	}
	return err
}

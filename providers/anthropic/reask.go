package anthropic

import (
	"context"
	"slices"

	ant "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// Reask is a ready RetryConfig.NextInput for Messages, given the answer a
// check rejected (retry.RejectedOutput): the conversation of input, the
// rejected *ant.Message as the assistant's turn, and a user turn that
// says what was wrong (llmhttp.ReaskText: the check's error, and a
// max_tokens or refusal stop). A tool call the check rejected (a tool
// that does not exist, arguments that fail their schema) is answered, as
// the API requires every tool_use to be, by a tool_result with is_error
// set and that text. A string or []MessageParam input gives
// []MessageParam, a MessageNewParams one the same params with the new
// messages; input is never modified. An output that is not a message
// adds the user turn alone.
func Reask(input, output any, err error) any {
	var p ant.MessageNewParams
	switch v := input.(type) {
	case string:
		p.Messages = []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock(v))}
	case []ant.MessageParam:
		p.Messages = v
	case ant.MessageNewParams:
		p = v
	default:
		return input
	}
	msgs := slices.Clone(p.Messages)
	msg, _ := output.(*ant.Message)
	var finish *llmhttp.AnswerError
	var turn []ant.ContentBlockParamUnion
	if msg != nil {
		msgs = append(msgs, msg.ToParam())
		if ae, ok := CheckAnswer(context.Background(), nil, msg).(*llmhttp.AnswerError); ok && ae.Kind != llmhttp.Empty {
			finish = ae
		}
	}
	text := llmhttp.ReaskText(reasonOf(err), finish)
	if msg != nil {
		for _, block := range msg.Content {
			if block.Type == "tool_use" {
				turn = append(turn, ant.NewToolResultBlock(block.ID, text, true))
			}
		}
	}
	if len(turn) == 0 {
		turn = append(turn, ant.NewTextBlock(text))
	}
	msgs = append(msgs, ant.NewUserMessage(turn...))
	if _, ok := input.(ant.MessageNewParams); ok {
		p.Messages = msgs
		return p
	}
	return msgs
}

// reasonOf is what a re-ask says was wrong: the check's own error, when
// err is a rejection.
func reasonOf(err error) error {
	if _, reason, ok := retry.RejectedOutput(err); ok {
		return reason
	}
	return err
}

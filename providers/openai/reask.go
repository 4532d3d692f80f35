package openai

import (
	"context"
	"slices"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// Reask is a ready RetryConfig.NextInput for Chat and Responses, given
// the answer a check rejected (retry.RejectedOutput): a request that
// ends on a user turn saying what was wrong (llmhttp.ReaskText: the
// check's error, and a length or content_filter finish). For Chat (a
// *oai.ChatCompletion output): the messages of input, the rejected
// answer as the assistant's, a tool message with that text for each tool
// call it made, and the user turn. For Responses (a *responses.Response
// output): the input items of the next turn, after the rejected response
// by its id (previous_response_id), or, when input stores nothing
// (store: false), after its messages and function calls sent again; each
// function call is answered with that text as its output. A string or
// message-list input gives a message list, a params one the same params;
// input is never modified. An output of neither kind adds the user turn
// alone.
func Reask(input, output any, err error) any {
	switch out := output.(type) {
	case *oai.ChatCompletion:
		return reaskChat(input, out, err)
	case *responses.Response:
		return reaskResponses(input, out, err)
	}
	switch input.(type) {
	case responses.ResponseInputParam, responses.ResponseNewParams:
		return reaskResponses(input, nil, err)
	}
	return reaskChat(input, nil, err)
}

// reaskChat is Reask for Chat.
func reaskChat(input any, out *oai.ChatCompletion, err error) any {
	var p oai.ChatCompletionNewParams
	switch v := input.(type) {
	case string:
		p.Messages = []oai.ChatCompletionMessageParamUnion{oai.UserMessage(v)}
	case []oai.ChatCompletionMessageParamUnion:
		p.Messages = v
	case oai.ChatCompletionNewParams:
		p = v
	default:
		return input
	}
	msgs := slices.Clone(p.Messages)
	text := llmhttp.ReaskText(reasonOf(err), nil)
	if out != nil && len(out.Choices) > 0 {
		text = llmhttp.ReaskText(reasonOf(err), finishOf(CheckAnswer(context.Background(), nil, out)))
		m := out.Choices[0].Message
		msgs = append(msgs, m.ToParam())
		for _, call := range m.ToolCalls {
			msgs = append(msgs, oai.ToolMessage(text, call.ID))
		}
	}
	msgs = append(msgs, oai.UserMessage(text))
	if _, ok := input.(oai.ChatCompletionNewParams); ok {
		p.Messages = msgs
		return p
	}
	return msgs
}

// reaskResponses is Reask for Responses.
func reaskResponses(input any, res *responses.Response, err error) any {
	var p responses.ResponseNewParams
	var items responses.ResponseInputParam
	switch v := input.(type) {
	case string:
		items = responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(v, responses.EasyInputMessageRoleUser)}
	case responses.ResponseInputParam:
		items = v
	case responses.ResponseNewParams:
		p = v
		if v.Input.OfString.Valid() {
			items = responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(v.Input.OfString.Value, responses.EasyInputMessageRoleUser)}
		} else {
			items = v.Input.OfInputItemList
		}
	default:
		return input
	}
	text := llmhttp.ReaskText(reasonOf(err), nil)
	if res != nil {
		text = llmhttp.ReaskText(reasonOf(err), finishOf(CheckResponse(context.Background(), nil, res)))
		stored := res.ID != "" && !(p.Store.Valid() && !p.Store.Value)
		if stored {
			// The response and all before it are the provider's already:
			// only the turn after it is sent.
			p.PreviousResponseID, items = param.NewOpt(res.ID), nil
		} else {
			items = append(slices.Clone(items), sentAgain(res)...)
		}
		for _, item := range res.Output {
			if item.Type == "function_call" {
				out := responses.ResponseInputItemParamOfFunctionCallOutput(text)
				out.OfFunctionCallOutput.CallID = param.NewOpt(item.CallID)
				items = append(items, out)
			}
		}
	}
	items = append(slices.Clone(items), responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleUser))
	if _, ok := input.(responses.ResponseNewParams); ok || p.PreviousResponseID.Valid() {
		p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
		return p
	}
	return items
}

// sentAgain is a response's messages and function calls as input items,
// for a request that cannot refer to it by its id.
func sentAgain(res *responses.Response) responses.ResponseInputParam {
	var items responses.ResponseInputParam
	for _, item := range res.Output {
		switch item.Type {
		case "message":
			m := item.AsMessage().ToParam()
			items = append(items, responses.ResponseInputItemUnionParam{OfOutputMessage: &m})
		case "function_call":
			fc := item.AsFunctionCall().ToParam()
			items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCall: &fc})
		}
	}
	return items
}

// finishOf is a check's error when it says the answer did not end on its
// own (cut off, or filtered), else nil.
func finishOf(err error) *llmhttp.AnswerError {
	if ae, ok := err.(*llmhttp.AnswerError); ok && ae.Kind != llmhttp.Empty {
		return ae
	}
	return nil
}

// reasonOf is what a re-ask says was wrong: the check's own error, when
// err is a rejection.
func reasonOf(err error) error {
	if _, reason, ok := retry.RejectedOutput(err); ok {
		return reason
	}
	return err
}

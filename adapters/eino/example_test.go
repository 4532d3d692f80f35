package eino_test

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/steadfast-go/steadfast/adapters/eino"
	"github.com/steadfast-go/steadfast/retry"
)

// hello is an eino chat model that answers every call.
type hello struct{}

func (hello) Generate(context.Context, []*schema.Message, ...model.Option) (*schema.Message, error) {
	return schema.AssistantMessage("Hello!", nil), nil
}
func (hello) Stream(context.Context, []*schema.Message, ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return schema.StreamReaderFromArray([]*schema.Message{schema.AssistantMessage("Hello!", nil)}), nil
}

func ExampleFromChatModel() {
	r, err := eino.FromChatModel(hello{}, eino.WithName("llm.chat"))
	if err != nil {
		panic(err)
	}
	out, err := retry.NewRetryRunnable(r, retry.DefaultRetryConfig()).Invoke(context.Background(), "Say hello")
	fmt.Println(out.(*schema.Message).Content, err)
	// Output: Hello! <nil>
}

func ExampleToChatModel() {
	r, err := eino.FromChatModel(hello{})
	if err != nil {
		panic(err)
	}
	cm, err := eino.ToChatModel(retry.NewRetryRunnable(r, retry.DefaultRetryConfig()))
	if err != nil {
		panic(err)
	}
	// cm is an eino ToolCallingChatModel again: use it in a chain or agent.
	msg, err := cm.Generate(context.Background(), []*schema.Message{schema.UserMessage("Say hello")})
	fmt.Println(msg.Content, err)
	// Output: Hello! <nil>
}

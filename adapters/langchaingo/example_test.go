package langchaingo_test

import (
	"context"
	"fmt"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/fake"

	"github.com/steadfast-go/steadfast/adapters/langchaingo"
	"github.com/steadfast-go/steadfast/retry"
)

func ExampleFromModel() {
	r, err := langchaingo.FromModel(fake.NewFakeLLM([]string{"Hello!"}), langchaingo.WithName("llm.chat"))
	if err != nil {
		panic(err)
	}
	out, err := retry.NewRetryRunnable(r, retry.DefaultRetryConfig()).Invoke(context.Background(), "Say hello")
	fmt.Println(out.(*llms.ContentResponse).Choices[0].Content, err)
	// Output: Hello! <nil>
}

func ExampleToModel() {
	r, err := langchaingo.FromModel(fake.NewFakeLLM([]string{"Hello!"}))
	if err != nil {
		panic(err)
	}
	m, err := langchaingo.ToModel(retry.NewRetryRunnable(r, retry.DefaultRetryConfig()))
	if err != nil {
		panic(err)
	}
	// m is an llms.Model again: use it in a chain or agent.
	out, err := llms.GenerateFromSinglePrompt(context.Background(), m, "Say hello")
	fmt.Println(out, err)
	// Output: Hello! <nil>
}

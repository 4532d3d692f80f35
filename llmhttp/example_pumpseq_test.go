package llmhttp_test

import (
	"context"
	"fmt"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// An SDK's stream as an iterator: the role-only event before the first
// with content is held back and delivered with it.
func ExamplePumpSeq() {
	events := func(yield func(string, error) bool) {
		for _, e := range []string{"(role)", "Hello", ", world"} {
			if !yield(e, nil) {
				return
			}
		}
	}
	ch := llmhttp.PumpSeq(context.Background(), events, llmhttp.PumpConfig[string]{
		Content: func(e string) bool { return e != "(role)" },
		Adapt:   func(err error) error { return err },
	})
	for v := range ch {
		fmt.Println(v)
	}
	// Output:
	// (role)
	// Hello
	// , world
}

package llmhttp_test

import (
	"errors"
	"fmt"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// A request of 126 532 input tokens asked for 4 000 more in a 128 000
// window: it fits with 1 468.
func ExampleOverflow_FitOutput() {
	o, _ := llmhttp.ParseOverflow(errors.New("This model's maximum context length is 128000 tokens. However, you requested 130532 tokens (126532 in the messages, 4000 in the completion)."))
	n, ok := o.FitOutput(0)
	fmt.Println(n, ok)
	// Output: 1468 true
}

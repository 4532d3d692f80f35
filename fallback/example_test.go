package fallback_test

import (
	"context"
	"fmt"
	"io"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/mock"
)

// quotaSpent is a local refusal, as an open circuit's: the candidate
// cannot serve now.
type quotaSpent struct{}

func (quotaSpent) Error() string { return "circuit open" }
func (quotaSpent) Local() bool   { return true }

func ExampleNew() {
	primary := mock.Named("gpt", mock.New(mock.Fail(quotaSpent{})))
	backup := mock.Named("claude", mock.New(mock.OK("answer from claude")))
	chat, err := fallback.New([]core.Runnable{primary, backup})
	if err != nil {
		panic(err)
	}
	out, err := chat.Invoke(context.Background(), "Say hello")
	fmt.Println(out, err)
	// Output: answer from claude <nil>
}

func ExampleWithInput() {
	a := mock.New(mock.Fail(quotaSpent{}))
	b := mock.New() // echoes its input
	chat, err := fallback.New([]core.Runnable{a, b}, fallback.WithInput(func(candidate int, in any) any {
		if candidate == 1 {
			return "translated for b: " + in.(string)
		}
		return in
	}))
	if err != nil {
		panic(err)
	}
	out, _ := chat.Invoke(context.Background(), "q")
	fmt.Println(out)
	// Output: translated for b: q
}

// A stream that breaks after its first chunk goes on, for a caller that
// passed core.WithResets, as a core.Reset and the next candidate's answer
// to the original input.
func ExampleWithMaxRestarts() {
	primary := mock.New(mock.Stream(io.ErrUnexpectedEOF, "Hel")) // cut mid-answer
	backup := mock.New(mock.Stream(nil, "Hello", " from the backup"))
	chat, err := fallback.New([]core.Runnable{primary, backup}, fallback.WithMaxRestarts(1))
	if err != nil {
		panic(err)
	}
	ch, _ := chat.Stream(context.Background(), "Say hello", core.WithResets())
	for v := range ch {
		if _, ok := v.(core.Reset); ok {
			fmt.Println(" [reset]")
			continue
		}
		fmt.Print(v)
	}
	fmt.Println()
	// Output:
	// Hel [reset]
	// Hello from the backup
}

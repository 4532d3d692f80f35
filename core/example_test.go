package core_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

func ExampleRunnableFunc() {
	upper := core.RunnableFunc(func(_ context.Context, input any, _ ...core.Option) (any, error) {
		return strings.ToUpper(input.(string)), nil
	})
	out, _ := upper.Invoke(context.Background(), "hello")
	fmt.Println(out)
	outs, _ := upper.Batch(context.Background(), []any{"a", "b"}, core.WithMaxConcurrency(2))
	fmt.Println(outs)
	ch, _ := upper.Stream(context.Background(), "stream")
	for chunk := range ch {
		fmt.Println(chunk)
	}
	// Output:
	// HELLO
	// [A B]
	// STREAM
}

func ExampleBatchError() {
	even := core.RunnableFunc(func(_ context.Context, input any, _ ...core.Option) (any, error) {
		if input.(int)%2 != 0 {
			return nil, fmt.Errorf("%d is odd", input)
		}
		return input, nil
	})
	outs, err := even.Batch(context.Background(), []any{2, 3, 4})
	fmt.Println(outs)
	if be, ok := errors.AsType[*core.BatchError](err); ok {
		for i, err := range be.Errs {
			if err != nil {
				fmt.Println(i, err)
			}
		}
	}
	// Output:
	// [2 <nil> 4]
	// 1 3 is odd
}

func ExampleWithOperation() {
	r := core.RunnableFunc(func(_ context.Context, _ any, opts ...core.Option) (any, error) {
		return core.OperationFrom(opts...), nil
	})
	out, _ := r.Invoke(context.Background(), "q", core.WithOperation("retriever"))
	fmt.Println(out)
	// Output: retriever
}

type modelKey struct{}

// A package defines its own call options with NewOption and Lookup, with no
// change to core.
func ExampleNewOption() {
	withModel := func(name string) core.Option { return core.NewOption(modelKey{}, name) }
	r := core.RunnableFunc(func(_ context.Context, _ any, opts ...core.Option) (any, error) {
		model, ok := core.Lookup[string](opts, modelKey{})
		return fmt.Sprint(model, " ", ok), nil
	})
	out, _ := r.Invoke(context.Background(), "q", withModel("small"), withModel("large"))
	fmt.Println(out)
	// Output: large true
}

func ExampleChain() {
	tag := func(name string) core.Middleware {
		return func(next core.Runnable) core.Runnable {
			return core.RunnableFunc(func(ctx context.Context, in any, opts ...core.Option) (any, error) {
				out, err := next.Invoke(ctx, in.(string)+" "+name, opts...)
				return out, err
			})
		}
	}
	echo := core.RunnableFunc(func(_ context.Context, in any, _ ...core.Option) (any, error) { return in, nil })
	out, _ := core.Chain(echo, tag("outer"), tag("inner")).Invoke(context.Background(), "call:")
	fmt.Println(out)
	// Output: call: outer inner
}

// limiter is a decorator that keeps its inner Runnable's meaning: it says
// so with Unwrap, and forwards nothing by hand.
type limiter struct{ core.Runnable }

func (l limiter) Unwrap() core.Runnable { return l.Runnable }

type search struct{ core.RunnableFunc }

func (search) Name() string { return "search" }

func ExampleNameOf() {
	r := limiter{search{}}
	fmt.Println(core.NameOf(r))
	// Output: search
}

func ExampleFind() {
	r := limiter{search{}} // a decorator over a search tool
	if s, ok := core.Find[search](r); ok {
		fmt.Println("found", s.Name())
	}
	_, ok := core.Find[limiter](search{})
	fmt.Println(ok)
	// Output:
	// found search
	// false
}

// A waiter of one's own (here a budget of retries, as retry.Budget asks
// for) answers with a Reservation: how long to wait, whether the call may
// go at all, and how to give the turn back when the call does not go
// after all.
func ExampleReservation() {
	turns := 1
	reserve := func() core.Reservation {
		if turns == 0 {
			return core.Reservation{} // not OK: refused, nothing taken
		}
		turns--
		return core.Reservation{OK: true, Cancel: func() { turns++ }}
	}
	first := reserve()
	fmt.Println(first.OK, reserve().OK) // the one turn is taken
	first.Cancel()                      // its call gave up: the turn goes back
	fmt.Println(reserve().OK)
	// Output:
	// true false
	// true
}

// A consumer that can discard what it has shown passes WithResets: a
// stream that breaks after its first chunk then starts again after a
// Reset (here a retry layer's RestartStreams), and the consumer throws
// away what it kept.
func ExampleWithResets() {
	model := mock.New(
		mock.Stream(io.ErrUnexpectedEOF, "Hel", "lo wo"), // the connection drops mid-answer
		mock.Stream(nil, "Hello", " world"))
	r := retry.NewRetryRunnable(model, retry.RetryConfig{MaxRetries: 2, RestartStreams: true})
	ch, _ := r.Stream(context.Background(), "Say hello", core.WithResets())
	var answer strings.Builder
	for v := range ch {
		switch v := v.(type) {
		case core.Reset:
			fmt.Println("restarted after:", v.Cause)
			answer.Reset() // what came before is void
		case error:
			fmt.Println("failed:", v)
			return
		case string:
			answer.WriteString(v)
		}
	}
	fmt.Println(answer.String())
	// Output:
	// restarted after: unexpected EOF
	// Hello world
}

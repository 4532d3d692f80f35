package hedge_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/hedge"
)

func ExampleNew() {
	// The first call is slow to answer; the hedge sent after 10ms is not.
	var calls atomic.Int32
	model := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		n := calls.Add(1)
		d := time.Millisecond
		if n == 1 {
			d = time.Second
		}
		select {
		case <-time.After(d):
			return fmt.Sprintf("answer %d", n), nil
		case <-ctx.Done(): // a losing attempt is cancelled at once
			return nil, ctx.Err()
		}
	})
	fast, err := hedge.New(model, hedge.Config{Delay: 10 * time.Millisecond, MaxHedges: 1})
	if err != nil {
		panic(err)
	}
	out, err := fast.Invoke(context.Background(), "q")
	fmt.Println(out, err)
	// Output: answer 2 <nil>
}

// Command pool shows one model served by three deployments: two regions
// and a second API key. A conversation stays on the deployment whose
// prompt cache is warm; then that deployment answers 429 with a
// Retry-After of two seconds for a while, and the pool takes it out of
// rotation for as long as it asked, sends the retry elsewhere at once, and
// brings the conversation home when it is back.
//
//	go run ./examples/pool
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pool:", err)
		os.Exit(1)
	}
}

// throttled is a deployment's 429 with its Retry-After.
type throttled struct{ after time.Duration }

func (e throttled) Error() string             { return fmt.Sprintf("429: rate limited, retry after %v", e.after) }
func (e throttled) StatusCode() int           { return 429 }
func (e throttled) RetryAfter() time.Duration { return e.after }

// deployment is one place the model is served from: it answers with its
// name, or 429 while throttled.
type deployment struct {
	name  string
	mu    sync.Mutex
	until time.Time // throttled until then
	calls int
}

func (d *deployment) answer(ctx context.Context, in any, _ ...core.Option) (any, error) {
	d.mu.Lock()
	d.calls++
	throttledNow := time.Now().Before(d.until)
	d.mu.Unlock()
	if throttledNow {
		return nil, throttled{after: 2 * time.Second}
	}
	time.Sleep(20 * time.Millisecond)
	return fmt.Sprintf("%s answered %q", d.name, in), nil
}

// session is what a call's input carries: its conversation and its turn.
type session struct{ id, text string }

func (s session) String() string { return s.text }

func run(w io.Writer) error {
	east, west, key2 := &deployment{name: "eastus"}, &deployment{name: "westeu"}, &deployment{name: "eastus-key2"}
	p, err := pool.New([]pool.Deployment{
		{Name: east.name, Runnable: core.RunnableFunc(east.answer)},
		{Name: west.name, Runnable: core.RunnableFunc(west.answer)},
		{Name: key2.name, Runnable: core.RunnableFunc(key2.answer)},
	}, pool.WithAffinity(func(_ context.Context, in any) string {
		if s, ok := in.(session); ok {
			return s.id // a conversation stays where its prompt cache is warm
		}
		return "" // no affinity: the less loaded of two deployments
	}))
	if err != nil {
		return err
	}
	r, err := retry.New(p, retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: 10 * time.Second})
	if err != nil {
		return err
	}
	ctx := context.Background()

	fmt.Fprintln(w, "a conversation, kept on one deployment:")
	var served []string
	for turn := 1; turn <= 4; turn++ {
		out, err := r.Invoke(ctx, session{id: "conversation-42", text: fmt.Sprintf("turn %d", turn)})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %v\n", out)
		served = append(served, strings.Fields(out.(string))[0])
	}

	// The conversation's deployment is throttled for a while.
	home := served[0]
	for _, d := range []*deployment{east, west, key2} {
		if d.name == home {
			d.mu.Lock()
			d.until = time.Now().Add(3 * time.Second)
			d.mu.Unlock()
		}
	}
	fmt.Fprintf(w, "\n%s is throttled (429, Retry-After 2s) for 3s:\n", home)
	start := time.Now()
	out, err := r.Invoke(ctx, session{id: "conversation-42", text: "turn 5"})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %v, after %v: the retry went elsewhere at once\n", out, time.Since(start).Round(10*time.Millisecond))
	out, err = r.Invoke(ctx, session{id: "conversation-42", text: "turn 6"})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %v: %s is out of rotation while it cools\n", out, home)

	time.Sleep(3 * time.Second)
	out, err = r.Invoke(ctx, session{id: "conversation-42", text: "turn 7"})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nafter the throttling:\n  %v: the conversation is home again\n", out)
	fmt.Fprintf(w, "\ncalls: %s %d, %s %d, %s %d\n", east.name, east.calls, west.name, west.calls, key2.name, key2.calls)
	return nil
}

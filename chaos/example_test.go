package chaos_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/steadfast-go/steadfast/chaos"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// A pipeline's test: the model is overloaded on the first call, and the
// retry layer is expected to ride it out.
func ExampleNew() {
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "a summary", nil })
	flaky := chaos.New(llm, chaos.Overloaded().First(1))
	r, err := retry.New(flaky, retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond},
		retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) {
			fmt.Printf("attempt %d: %s (%s)\n", ev.Attempt, retry.ClassOf(ev.Err), retry.ErrorType(ev.Err))
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := r.Invoke(context.Background(), "an article")
	fmt.Println(out, err)
	// Output:
	// attempt 1: overloaded (server_error)
	// a summary <nil>
}

// Faults in a chain, innermost, firing only for the calls a test marks:
// the rest of the process is untouched.
func ExampleMiddleware() {
	type chaosKey struct{}
	marked := func(ctx context.Context) bool { return ctx.Value(chaosKey{}) != nil }
	llm := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	r := core.Chain(llm,
		retry.Middleware(retry.RetryConfig{MaxRetries: 1, InitialBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond}),
		chaos.Middleware(chaos.QuotaExhausted().When(marked)))

	_, err := r.Invoke(context.WithValue(context.Background(), chaosKey{}, true), "q")
	fmt.Println("marked:", retry.ErrorType(err), retry.IsRetryable(err))
	out, err := r.Invoke(context.Background(), "q")
	fmt.Println("unmarked:", out, err)
	// Output:
	// marked: insufficient_quota false
	// unmarked: ok <nil>
}

// An SDK's client with faults on the wire: here a plain http.Client, and
// a stream the server sends whole, cut by the Transport after its first
// event.
func ExampleTransport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"delta\":\"Hel\"}\n\ndata: {\"delta\":\"lo\"}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	client := &http.Client{Transport: chaos.Transport(nil, chaos.StreamBroken(1).First(1))}

	resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	fmt.Printf("%q %v\n", got, err)
	// Output:
	// "data: {\"delta\":\"Hel\"}\n\n" unexpected EOF
}

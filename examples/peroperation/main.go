// Command peroperation runs one agent step, an LLM call, a retrieval and a
// tool call, each under its own retry policy from policies.json and all
// sharing one retry budget, and prints per operation the attempts made and
// the outcome.
//
//	go run ./examples/peroperation
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

//go:embed policies.json
var policyFile []byte

type statusError struct {
	code       int
	retryAfter time.Duration
}

func (e *statusError) Error() string             { return fmt.Sprintf("status %d", e.code) }
func (e *statusError) StatusCode() int           { return e.code }
func (e *statusError) RetryAfter() time.Duration { return e.retryAfter }

// component is a simulated LLM, retriever or tool: it fails with its
// script, then answers. Its Name() selects its policy.
type component struct {
	name       string
	idempotent bool
	mu         sync.Mutex
	script     []error
	calls      int
	maxRetries int // as the retry layer tells each attempt
}

func (c *component) Name() string     { return c.name }
func (c *component) Idempotent() bool { return c.idempotent }

func (c *component) Invoke(ctx context.Context, in any, _ ...core.Option) (any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if at, ok := retry.AttemptFromContext(ctx); ok {
		c.maxRetries = at.MaxAttempts - 1
	}
	if c.calls <= len(c.script) {
		return nil, c.script[c.calls-1]
	}
	return fmt.Sprintf("%s(%v)", c.name, in), nil
}

func (c *component) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(c.Invoke).Batch(ctx, in, opts...)
}

func (c *component) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(c.Invoke).Stream(ctx, in, opts...)
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	cfg, policies, err := retry.ParsePolicies(policyFile)
	if err != nil {
		return err
	}
	// One budget for the whole agent: when its providers are failing,
	// retries stop multiplying the load on them.
	budget := retry.NewTokenBudget(10, 0.1)

	steps := []*component{
		{name: "retriever", idempotent: true, script: []error{&statusError{code: 504}}},
		{name: "llm.chat", idempotent: true, script: []error{&statusError{code: 429, retryAfter: 300 * time.Millisecond}, &statusError{code: 529}}},
		{name: "tools.create_ticket", script: []error{&statusError{code: 503}, &statusError{code: 503}}},
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "operation\tmax_retries\tattempts\toutcome\t")
	input := any("why is the build red?")
	for _, c := range steps {
		r, err := retry.New(c, cfg, append(policies, retry.WithBudget(budget))...)
		if err != nil {
			return err
		}
		out, err := r.Invoke(context.Background(), input)
		outcome := "success"
		if re, ok := errors.AsType[*retry.Error](err); ok {
			outcome = fmt.Sprintf("%s: %v", re.Outcome, re.Err)
		} else if err == nil {
			input = out
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t\n", c.name, c.maxRetries, c.calls, outcome)
	}
	return tw.Flush()
}

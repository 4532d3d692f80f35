// Command tool shows how a side-effecting tool is retried safely. A payment
// tool charges a card and then loses the connection before it can answer:
// the charge happened, but the caller sees a transient error.
//
//   - By default a RetryRunnable never retries a Runnable whose Idempotent()
//     is false: the caller gets the error and no second charge is made.
//
//   - With RetryNonIdempotent in its policy the call is retried, and the tool
//     uses retry.AttemptFromContext's InvocationID, the same on every attempt
//     of one call, as its idempotency key: the retry returns the first
//     charge's receipt instead of charging again.
//
//     go run ./examples/tool
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// paymentTool charges a card. It is not idempotent: each execution moves
// money. Its first execution loses the connection after charging.
type paymentTool struct {
	mu       sync.Mutex
	calls    int
	charges  int
	receipts map[string]string // idempotency key → receipt
}

func (p *paymentTool) Name() string     { return "payments.charge" }
func (p *paymentTool) Idempotent() bool { return false }

func (p *paymentTool) Invoke(ctx context.Context, input any, _ ...core.Option) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	key := ""
	if info, ok := retry.AttemptFromContext(ctx); ok {
		key = info.InvocationID
		if receipt, done := p.receipts[key]; done {
			return receipt, nil // already charged for this call: no second charge
		}
	}
	p.charges++
	receipt := fmt.Sprintf("receipt #%d for %v", p.charges, input)
	if key != "" {
		p.receipts[key] = receipt
	}
	if p.calls == 1 {
		// Charged, then the connection dropped before the answer.
		return nil, fmt.Errorf("payments: reading response: %w", syscall.ECONNRESET)
	}
	return receipt, nil
}

func (p *paymentTool) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return nil, errors.New("payments: batch not supported")
}

func (p *paymentTool) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	return nil, errors.New("payments: stream not supported")
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}
	for _, optIn := range []bool{false, true} {
		tool := &paymentTool{receipts: map[string]string{}}
		cfg.RetryNonIdempotent = optIn
		r, err := retry.New(tool, cfg)
		if err != nil {
			return err
		}
		out, err := r.Invoke(context.Background(), "$42.00 to ACME")
		fmt.Fprintf(w, "RetryNonIdempotent=%v: %d call(s), charges applied: %d\n", optIn, tool.calls, tool.charges)
		if err != nil {
			fmt.Fprintf(w, "  error: %v\n", err)
		} else {
			fmt.Fprintf(w, "  result: %v\n", out)
		}
	}
	return nil
}

// Command retriever sends a batch of queries to a simulated vector store in
// which some queries time out now and then and one is malformed. The
// RetryRunnable re-sends only the failed queries: it prints each round,
// which items were retried and how often, and each item's final outcome.
//
//	go run ./examples/retriever
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

var errTimeout = errors.New("vector store: query timed out")

// badQuery is a 400: no retry can fix it.
type badQuery struct{ query string }

func (e *badQuery) Error() string   { return fmt.Sprintf("vector store: malformed query %q", e.query) }
func (e *badQuery) StatusCode() int { return 400 }

// vectorStore answers each query after its scripted number of timeouts.
type vectorStore struct {
	mu       sync.Mutex
	timeouts map[string]int // query → timeouts still to give
	calls    map[string]int // query → times it was sent
}

func (s *vectorStore) search(_ context.Context, input any, _ ...core.Option) (any, error) {
	q := input.(string)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[q]++
	if strings.Contains(q, "DROP") {
		return nil, &badQuery{query: q}
	}
	if s.timeouts[q] > 0 {
		s.timeouts[q]--
		return nil, errTimeout
	}
	return fmt.Sprintf("3 documents about %s", q), nil
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	store := &vectorStore{
		timeouts: map[string]int{"transformers": 1, "retrieval augmented generation": 2},
		calls:    map[string]int{},
	}
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second}
	r, err := retry.New(core.RunnableFunc(store.search), cfg,
		retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) {
			fmt.Fprintf(w, "round %d: re-sending %d failed item(s) in %v\n", ev.Attempt, ev.Items, ev.Delay)
		}))
	if err != nil {
		return err
	}

	queries := []any{"vector databases", "transformers", "'; DROP TABLE docs", "retrieval augmented generation", "embeddings"}
	outs, err := r.Batch(context.Background(), queries, core.WithOperation("retriever"), core.WithMaxConcurrency(4))
	var be *core.BatchError
	if err != nil && !errors.As(err, &be) {
		return err
	}
	fmt.Fprintln(w)
	for i, q := range queries {
		sent := store.calls[q.(string)]
		switch {
		case be != nil && be.Errs[i] != nil:
			var re *retry.Error
			errors.As(be.Errs[i], &re)
			fmt.Fprintf(w, "%-32q sent %dx  failed (%s): %v\n", q, sent, re.Outcome, re.Err)
		default:
			fmt.Fprintf(w, "%-32q sent %dx  ok: %v\n", q, sent, outs[i])
		}
	}
	return nil
}

package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadfast-go/steadfast/adapters/temporal"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/retry"
)

// responseID is where chunker keeps its stream's id in the call's state,
// as openai.Responses keeps its response id: what Resume needs.
var responseID = core.NewStateKey[string]("test.response")

// chunker streams the ints 1 to n under a response id it keeps in the
// call's state, and resumes after any chunk of the stream whose id the
// state holds.
type chunker struct {
	n       int
	mu      sync.Mutex
	resumed []any // the last chunk each Resume was given
	ids     []string
}

func (c *chunker) Invoke(context.Context, any, ...core.Option) (any, error) {
	return nil, errors.New("chunker: streams only")
}

func (c *chunker) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return nil, errors.New("chunker: streams only")
}

func (c *chunker) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	responseID.Store(ctx, "resp_42")
	return c.from(ctx, 1), nil
}

func (c *chunker) Resume(ctx context.Context, _ any, last any, _ ...core.Option) (<-chan any, error) {
	id, _ := responseID.Load(ctx)
	c.mu.Lock()
	c.resumed, c.ids = append(c.resumed, last), append(c.ids, id)
	c.mu.Unlock()
	n, ok := last.(int)
	if !ok || id != "resp_42" {
		return nil, retry.Permanent(fmt.Errorf("chunker: cannot resume after %#v of %q", last, id))
	}
	return c.from(ctx, n+1), nil
}

// CanResume reports true: every stream of it resumes.
func (c *chunker) CanResume(context.Context) bool { return true }

func (c *chunker) from(ctx context.Context, first int) <-chan any {
	ch := make(chan any)
	go func() {
		defer close(ch)
		for i := first; i <= c.n; i++ {
			if !streams.Send(ctx, ch, i) {
				return
			}
		}
	}()
	return ch
}

// sink is a subscriber: it keeps each chunk once by its Seq, and counts
// the chunks handed to it again.
type sink struct {
	mu     sync.Mutex
	bySeq  map[int]any
	again  int
	failAt int // fails the delivery of this Seq once: the worker dies
}

func (s *sink) deliver(ctx context.Context, chunk any) error {
	d, ok := temporal.DeliveryFrom(ctx)
	if !ok {
		return errors.New("no Delivery in deliver's context")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.Seq == s.failAt {
		s.failAt = 0
		return errors.New("worker lost")
	}
	if _, dup := s.bySeq[d.Seq]; dup {
		s.again++
	}
	s.bySeq[d.Seq] = chunk
	return nil
}

// A stream broken after three chunks resumes, in the next activity
// attempt, after the third: the checkpoint carried the last chunk (as its
// Go type, with WithChunk) and the call's state (the response id). Every
// chunk is delivered once, in order.
func TestStreamActivityResumesFromTheCheckpoint(t *testing.T) {
	c := &chunker{n: 8}
	r, err := retry.New(c, retry.RetryConfig{MaxRetries: 3, ResumeStreams: true})
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{bySeq: map[int]any{}, failAt: 4}
	fn := temporal.StreamActivity[string](r, s.deliver, temporal.WithChunk[int]())
	runs := &activityRuns{t: t}
	if _, err := runs.run(fn, "q"); err == nil {
		t.Fatal("first activity attempt: error = nil, want the delivery's failure")
	}
	if _, err := runs.run(fn, "q"); err != nil {
		t.Fatalf("second activity attempt: %v", err)
	}
	for seq := 1; seq <= 8; seq++ {
		if s.bySeq[seq] != seq {
			t.Errorf("chunk %d = %v, want %d", seq, s.bySeq[seq], seq)
		}
	}
	if s.again != 0 {
		t.Errorf("%d chunks delivered again, want none", s.again)
	}
	if !slices.Equal(c.resumed, []any{3}) || !slices.Equal(c.ids, []string{"resp_42"}) {
		t.Errorf("Resume given %v with ids %v, want [3] (an int) and [resp_42]", c.resumed, c.ids)
	}
}

// The SDK sends an activity's first heartbeat at once and holds the next
// for 80 % of the HeartbeatTimeout: a stream's first heartbeat carries its
// first chunk, so that a worker that dies after it resumes rather than
// starting again, even when a retry came before that chunk.
func TestStreamActivityFirstHeartbeatCarriesTheFirstChunk(t *testing.T) {
	for name, c := range map[string]core.Runnable{
		"first attempt":   &chunker{n: 3},
		"after a failure": &failFirst{chunker: &chunker{n: 3}},
	} {
		r, err := retry.New(c, retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		s := &sink{bySeq: map[int]any{}}
		runs := &activityRuns{t: t}
		if _, err := runs.run(temporal.StreamActivity[string](r, s.deliver), "q"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var first []struct {
			Attempts, Delivered int
		}
		raw, _ := runs.first.Load().(string)
		if err := json.Unmarshal([]byte(raw), &first); err != nil || len(first) != 1 {
			t.Fatalf("%s: first heartbeat's details %s: %v", name, raw, err)
		}
		want := 1
		if name == "after a failure" {
			want = 2
		}
		if first[0].Delivered != 1 || first[0].Attempts != want {
			t.Errorf("%s: the first heartbeat carried %d chunks and %d attempts, want 1 chunk and %d attempts", name, first[0].Delivered, first[0].Attempts, want)
		}
	}
}

// failFirst fails its first stream's creation with a 503, then streams.
type failFirst struct {
	*chunker
	failed atomic.Bool
}

func (f *failFirst) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	if !f.failed.Swap(true) {
		return nil, apiError(503, "", 0)
	}
	return f.chunker.Stream(ctx, in, opts...)
}

// A stream that cannot resume, once chunks were delivered, fails
// NonRetryable rather than start again and deliver them twice.
func TestStreamActivityWillNotDeliverTwice(t *testing.T) {
	plain := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "x", nil })
	r, err := retry.New(streamOnly{plain, &chunker{n: 5}}, retry.RetryConfig{MaxRetries: 3})
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{bySeq: map[int]any{}, failAt: 3}
	fn := temporal.StreamActivity[string](r, s.deliver)
	runs := &activityRuns{t: t}
	if _, err := runs.run(fn, "q"); err == nil {
		t.Fatal("first activity attempt: error = nil")
	}
	_, err = runs.run(fn, "q")
	if app := applicationError(t, err); !app.NonRetryable() || app.Type() != "not_resumable" {
		t.Errorf("second attempt: %v, want NonRetryable not_resumable", err)
	}
	if len(s.bySeq) != 2 || s.again != 0 {
		t.Errorf("delivered %v (%d again), want chunks 1 and 2 once", s.bySeq, s.again)
	}
}

// streamOnly streams as its chunker does, with no Resume.
type streamOnly struct {
	core.RunnableFunc
	c *chunker
}

func (s streamOnly) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return s.c.Stream(ctx, in, opts...)
}

func TestStreamActivityBadArguments(t *testing.T) {
	for name, fn := range map[string]func(context.Context, string) error{
		"nil Runnable": temporal.StreamActivity[string](nil, (&sink{}).deliver),
		"nil deliver":  temporal.StreamActivity[string](&chunker{}, nil),
	} {
		runs := &activityRuns{t: t}
		_, err := runs.run(fn, "q")
		if app := applicationError(t, err); !app.NonRetryable() {
			t.Errorf("%s: %v, want NonRetryable", name, err)
		}
	}
}

package e2e

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/steadfast-go/steadfast/adapters/temporal"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// The stream of each kind of worker: 20 words, one every 40ms.
const (
	words = 20
	gap   = 40 * time.Millisecond
)

func activityOptions(name string) activity.RegisterOptions {
	return activity.RegisterOptions{Name: name}
}

// streamPolicy is the retry layer's in the workers: a break is resumed.
var streamPolicy = retry.RetryConfig{MaxRetries: 3, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second, ResumeStreams: true}

// streamActivity is the activity "stream" of a worker of kind: through
// openai.Responses against the slow fake API at provider ("responses"), or
// through a core.Resumer of words ("resumer"); each chunk is posted to the
// subscriber at sink.
func streamActivity(kind, provider, sink string) (func(context.Context, string) error, error) {
	switch kind {
	case "responses":
		model := openai.NewResponses("gpt-test", option.WithBaseURL(provider+"/"), option.WithAPIKey("test"), openai.WithResumableStreams())
		r, err := retry.New(model, streamPolicy)
		if err != nil {
			return nil, err
		}
		return temporal.StreamActivity[string](r, func(ctx context.Context, chunk any) error {
			ev := chunk.(responses.ResponseStreamEventUnion)
			d, _ := temporal.DeliveryFrom(ctx)
			return post(ctx, sink, delivery{Seq: d.Seq, Text: eventText(ev.SequenceNumber, ev.Type, ev.Delta)})
		}, temporal.WithChunk[responses.ResponseStreamEventUnion]()), nil
	case "resumer":
		r, err := retry.New(&wordStream{}, streamPolicy)
		if err != nil {
			return nil, err
		}
		return temporal.StreamActivity[string](r, func(ctx context.Context, chunk any) error {
			d, _ := temporal.DeliveryFrom(ctx)
			return post(ctx, sink, delivery{Seq: d.Seq, Text: chunk.(string)})
		}, temporal.WithChunk[string]()), nil
	}
	return nil, fmt.Errorf("no worker of kind %q", kind)
}

func eventText(seq int64, typ, delta string) string { return fmt.Sprintf("%d %s %s", seq, typ, delta) }

// streamID is where wordStream keeps the id of its stream: what its
// Resume needs, carried in the checkpoint from one worker to the next.
var streamID = core.NewStateKey[string]("e2e.stream")

// wordStream streams "w01" to "w20", one every gap, and resumes after any
// of them for a stream whose id the call's state holds.
type wordStream struct{}

func (*wordStream) Invoke(context.Context, any, ...core.Option) (any, error) {
	return nil, errors.New("wordStream: streams only")
}

func (*wordStream) Batch(context.Context, []any, ...core.Option) ([]any, error) {
	return nil, errors.New("wordStream: streams only")
}

func (w *wordStream) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	streamID.Store(ctx, "words-1")
	return w.from(ctx, 1), nil
}

func (w *wordStream) Resume(ctx context.Context, _ any, last any, _ ...core.Option) (<-chan any, error) {
	id, _ := streamID.Load(ctx)
	s, _ := last.(string)
	n, err := strconv.Atoi(strings.TrimPrefix(s, "w"))
	if id != "words-1" || err != nil {
		return nil, retry.Permanent(fmt.Errorf("wordStream: no stream %q to resume after %#v", id, last))
	}
	return w.from(ctx, n+1), nil
}

// CanResume reports true: every stream of it resumes.
func (w *wordStream) CanResume(context.Context) bool { return true }

func (*wordStream) from(ctx context.Context, first int) <-chan any {
	ch := make(chan any)
	go func() {
		defer close(ch)
		for i := first; i <= words; i++ {
			select {
			case <-ctx.Done():
				return
			case <-time.After(gap):
			}
			if !streams.Send(ctx, ch, fmt.Sprintf("w%02d", i)) {
				return
			}
		}
	}()
	return ch
}

// A worker killed with SIGKILL while a stream activity is half delivered:
// the next activity attempt, on another worker process, resumes from the
// checkpoint in the heartbeat details, and the subscriber gets every chunk
// once, in order, as sent. Through openai.Responses (a background
// response, resumed with starting_after) and through a core.Resumer.
func TestKilledWorkerStreamResumesOnAnother(t *testing.T) {
	for _, kind := range []string{"responses", "resumer"} {
		t.Run(kind, func(t *testing.T) {
			ts := newServer(t)
			api := newSlowResponses(t, words, gap)
			want := wantChunks(kind)
			s := newSink(t, len(want)/2)
			ts.NewWorker(workflowQueue, func(r worker.Registry) {
				r.RegisterWorkflowWithOptions(streamWorkflow, workflow.RegisterOptions{Name: "stream"})
			})
			first := startWorker(t, ts, kind, api.srv.URL, s.srv.URL)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			run, err := ts.GetDefaultClient().ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "stream-" + kind, TaskQueue: workflowQueue}, "stream", "tell me")
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-s.reached:
			case <-ctx.Done():
				t.Fatal("half the stream was never delivered")
			}
			first.kill(t)
			s.mu.Lock()
			atKill := len(s.seen)
			s.mu.Unlock()
			startWorker(t, ts, kind, api.srv.URL, s.srv.URL)
			if err := run.Get(ctx, nil); err != nil {
				t.Fatalf("workflow: %v", err)
			}

			s.mu.Lock()
			defer s.mu.Unlock()
			t.Logf("%s: killed after %d of %d chunks; %d delivered again after the last heartbeat that reached the server", kind, atKill, len(want), s.again)
			if len(s.order) != len(want) {
				t.Errorf("subscriber got %d chunks, want %d", len(s.order), len(want))
			}
			for i, d := range s.order {
				if d.Seq != i+1 || i >= len(want) || d.Text != want[i] {
					t.Errorf("chunk %d: seq %d %q, want seq %d %q", i, d.Seq, d.Text, i+1, want[min(i, len(want)-1)])
				}
			}
			for _, g := range s.garbled {
				t.Errorf("garbled: %s", g)
			}
			// Resumed, not started again: only the chunks delivered after
			// the last checkpoint that reached the server go again.
			if s.again >= atKill {
				t.Errorf("%d chunks delivered again of the %d delivered before the kill: the stream started again rather than resume", s.again, atKill)
			}
			if kind == "responses" {
				reqs := api.requests()
				if len(reqs) < 2 || !strings.HasPrefix(reqs[0], "POST ") || strings.Count(strings.Join(reqs, "\n"), "POST ") != 1 ||
					!strings.Contains(reqs[len(reqs)-1], "starting_after=") {
					t.Errorf("requests = %v, want one POST (the response is never made again) and a GET with starting_after", reqs)
				}
			}
		})
	}
}

// wantChunks is what the subscriber must get, in order.
func wantChunks(kind string) []string {
	var want []string
	switch kind {
	case "responses":
		want = append(want, eventText(0, "response.created", ""))
		for i := range words {
			want = append(want, eventText(int64(i+1), "response.output_text.delta", fmt.Sprintf("w%02d ", i+1)))
		}
		want = append(want, eventText(words+1, "response.completed", ""))
	case "resumer":
		for i := range words {
			want = append(want, fmt.Sprintf("w%02d", i+1))
		}
	}
	return want
}

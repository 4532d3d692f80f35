package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/steadfast-go/steadfast/core"
)

// Delivery says which chunk of which call deliver is handed: Seq counts
// the call's chunks from 1, in every activity attempt alike.
type Delivery struct {
	// InvocationID is the call's, the same in every activity attempt.
	InvocationID string
	// Seq is the chunk's place in the stream, from 1.
	Seq int
}

type deliveryKey struct{}

// DeliveryFrom returns the Delivery of the chunk a deliver function was
// handed with ctx, and false for another context. A chunk delivered after
// the last heartbeat that reached Temporal is handed to deliver again,
// with the same Seq, when the next activity attempt resumes (see
// StreamActivity): a subscriber keeps each chunk once by its Seq.
func DeliveryFrom(ctx context.Context) (Delivery, bool) {
	d, ok := ctx.Value(deliveryKey{}).(Delivery)
	return d, ok
}

// WithChunk tells StreamActivity the Go type of the stream's chunks, so
// that the last chunk of a checkpoint is given back to Resume as a T
// (decoded from JSON): Resume of openai.Responses wants a
// responses.ResponseStreamEventUnion. Without it, Resume is given the
// chunk as encoding/json decodes it into an any.
func WithChunk[T any]() Option {
	return func(o *options) {
		o.decode = func(raw json.RawMessage) (any, error) {
			var v T
			err := json.Unmarshal(raw, &v)
			return v, err
		}
	}
}

// StreamActivity returns an activity function that calls r's Stream with
// its input, and hands each chunk, in order, to deliver. After each chunk
// it records a checkpoint in the heartbeat details: the chunks delivered,
// the last one (as JSON), the attempts made and the call's state (what
// Resume needs: for openai.Responses with WithResumableStreams, the
// response's id). The next activity attempt, on this worker or another,
// resumes the stream after the last chunk checkpointed, through r's Resume
// (r is a *retry.RetryRunnable over a Runnable that can resume), so that
// deliver sees every chunk once, but those delivered after the last
// heartbeat that reached Temporal before a worker died: the next attempt
// hands them to deliver again, with the same DeliveryFrom(ctx).Seq.
//
// Its failures are ToApplicationError's; attempts, the InvocationID, the
// hand-off and the heartbeats are as for Activity. The heartbeats go on
// while the stream is open, so a stream that stalls after its first chunk
// is the retry layer's to end: set RetryConfig.ChunkTimeout. A stream that broke
// after chunks were delivered, when r's chain cannot resume it, fails
// NonRetryable (type "not_resumable"): starting again would deliver them
// twice. A failure of deliver ends the stream, and the activity attempt
// fails with it (retryable unless deliver marks it otherwise, with
// retry.Permanent or a NonRetryable ApplicationError). A chunk that
// encoding/json cannot encode fails NonRetryable (type "steadfast_output").
func StreamActivity[In any](r core.Runnable, deliver func(ctx context.Context, chunk any) error, opts ...Option) func(context.Context, In) error {
	o := newOptions(opts)
	switch {
	case o.err != nil:
	case r == nil:
		o.err = errors.New("temporal: StreamActivity: nil Runnable")
	case deliver == nil:
		o.err = errors.New("temporal: StreamActivity: nil deliver")
	}
	return func(ctx context.Context, in In) error {
		ctx, hb, err := begin(ctx, &o, true)
		if err != nil {
			return err
		}
		defer hb.stop()
		return (&streamRun{r: r, deliver: deliver, o: &o, hb: hb}).run(ctx, in)
	}
}

// streamRun is one activity attempt of a StreamActivity.
type streamRun struct {
	r       core.Runnable
	deliver func(context.Context, any) error
	o       *options
	hb      *heartbeat
	st      core.State
	id      string
}

func (s *streamRun) run(ctx context.Context, in any) error {
	cp := s.hb.checkpoint()
	if len(cp.State) > 0 {
		if err := s.st.UnmarshalJSON(cp.State); err != nil {
			return permanent("steadfast_checkpoint", fmt.Errorf("temporal: StreamActivity: the checkpoint's state: %w", err))
		}
	}
	s.id = invocationID(activity.GetInfo(ctx))
	sctx, cancel := context.WithCancel(core.WithState(ctx, &s.st))
	defer cancel()
	ch, err := s.open(sctx, in, cp)
	if err != nil {
		return err
	}
	defer func() {
		cancel()
		for range ch { // the stream's goroutine ends once its consumer is gone
		}
	}()
	seq := cp.Delivered
	for v := range ch {
		if err, ok := v.(error); ok {
			return ToApplicationError(err)
		}
		seq++
		if err := s.deliver(context.WithValue(ctx, deliveryKey{}, Delivery{InvocationID: s.id, Seq: seq}), v); err != nil {
			return ToApplicationError(err)
		}
		if err := s.record(seq, v); err != nil {
			return err
		}
	}
	return nil
}

// open starts the stream, or resumes it after the checkpoint's last chunk.
func (s *streamRun) open(ctx context.Context, in any, cp checkpoint) (<-chan any, error) {
	if cp.Delivered == 0 {
		ch, err := s.r.Stream(ctx, in)
		return ch, ToApplicationError(err)
	}
	resumer, ok := s.r.(core.Resumer)
	if !ok || !resumer.CanResume(ctx) {
		return nil, permanent("not_resumable", fmt.Errorf("temporal: StreamActivity: %d chunks were delivered and the Runnable cannot resume its stream",
			cp.Delivered))
	}
	last, err := s.o.decodeChunk(cp.Last)
	if err != nil {
		return nil, permanent("steadfast_checkpoint", fmt.Errorf("temporal: StreamActivity: the checkpoint's last chunk: %w", err))
	}
	ch, err := resumer.Resume(ctx, in, last)
	return ch, ToApplicationError(err)
}

// record checkpoints the chunk just delivered, the seq-th.
func (s *streamRun) record(seq int, chunk any) error {
	last, err := json.Marshal(chunk)
	if err != nil {
		return permanent("steadfast_output", fmt.Errorf("temporal: StreamActivity: chunk %d (%T) cannot be checkpointed: %w", seq, chunk, err))
	}
	state, err := s.st.MarshalJSON()
	if err != nil {
		return permanent("steadfast_output", fmt.Errorf("temporal: StreamActivity: the call's state cannot be checkpointed: %w", err))
	}
	s.hb.update(func(cp *checkpoint) {
		cp.Delivered, cp.Last, cp.State = seq, last, state
	})
	return nil
}

// permanent is a NonRetryable ApplicationError of type typ.
func permanent(typ string, err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), typ, err)
}

package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/room"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/retry"
)

// Runnable injects faults into the calls of the Runnable it wraps. Put it
// innermost in a chain, where a provider's adapter is, so that every
// decorator around it sees the faults as a provider's:
//
//	core.Chain(chaos.New(llm, chaos.RateLimited(2*time.Second).First(1)), retry.Middleware(cfg))
type Runnable struct {
	inner  core.Runnable
	faults []*armed
	err    error // a bad argument: every call fails with it
}

// New returns inner with faults injected into its calls. For each call,
// the faults are asked in order whether they fire, and the first that
// does is injected: an error as inner's adapter would return it
// (llmhttp.APIError, read by llmhttp.Classify: the retry rules, a pool,
// a breaker read it as a provider's), a delay before the call, a call
// that hangs until its context ends; for a stream, stream faults act
// after its first chunks. A fault no call can fire changes nothing.
//
// A nil inner or a bad fault makes a Runnable whose every call fails with
// an error naming it, which no retry fixes.
func New(inner core.Runnable, faults ...Fault) *Runnable {
	r := &Runnable{inner: inner}
	r.faults, r.err = arm(faults)
	if inner == nil && r.err == nil {
		r.err = errors.New("chaos: New: nil Runnable")
	}
	if r.err != nil {
		r.err = retry.Permanent(r.err)
	}
	return r
}

// Middleware returns faults as a core.Middleware: New around the Runnable
// it wraps. Give it last to core.Chain, so that it is innermost.
func Middleware(faults ...Fault) core.Middleware {
	return func(next core.Runnable) core.Runnable { return New(next, faults...) }
}

// Unwrap returns the Runnable r wraps, so that core.NameOf and
// core.IsIdempotent see through it.
func (r *Runnable) Unwrap() core.Runnable { return r.inner }

// Invoke injects a fault, or calls inner's Invoke.
func (r *Runnable) Invoke(ctx context.Context, input any, opts ...core.Option) (any, error) {
	if err := r.before(ctx); err != nil {
		return nil, err
	}
	return r.inner.Invoke(ctx, input, opts...)
}

// Batch invokes each input through Invoke, concurrently (bounded by
// core.WithMaxConcurrency): each item meets its own faults.
func (r *Runnable) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(r.Invoke).Batch(ctx, inputs, opts...)
}

// Stream injects a fault into the stream's creation, or into the stream
// after its first chunks.
func (r *Runnable) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	if err := r.before(ctx); err != nil {
		return nil, err
	}
	return r.streamed(ctx, func(ctx context.Context) (<-chan any, error) { return r.inner.Stream(ctx, input, opts...) })
}

// Resume resumes inner's stream, as Stream injects faults into it: a
// resumed stream meets faults as a new one does.
func (r *Runnable) Resume(ctx context.Context, input, last any, opts ...core.Option) (<-chan any, error) {
	if err := r.before(ctx); err != nil {
		return nil, err
	}
	res, ok := r.inner.(core.Resumer)
	if !ok {
		return nil, retry.Permanent(fmt.Errorf("chaos: %s cannot resume a stream", core.NameOf(r.inner)))
	}
	return r.streamed(ctx, func(ctx context.Context) (<-chan any, error) { return res.Resume(ctx, input, last, opts...) })
}

// CanResume reports whether inner can resume the call's stream.
func (r *Runnable) CanResume(ctx context.Context) bool {
	res, ok := r.inner.(core.Resumer)
	return ok && r.err == nil && res.CanResume(ctx)
}

// before injects the first call fault that fires: an error, or a delay
// before the call. It returns nil for a call to go ahead.
func (r *Runnable) before(ctx context.Context) error {
	if r.err != nil {
		return r.err
	}
	for _, f := range r.faults {
		if f.kind.inStream() || !f.fires(ctx) {
			continue
		}
		injected(ctx, &f.Fault)
		switch f.kind {
		case latency:
			return room.Sleep(ctx, f.wait)
		case hang:
			<-ctx.Done()
			return ctx.Err()
		}
		p := f.provider
		if p == "" {
			p = OpenAI
		}
		return f.answerOf(p).err(p)
	}
	return nil
}

// streamed opens a stream with open and, when a stream fault fires,
// passes on its first chunks and then injects the fault.
func (r *Runnable) streamed(ctx context.Context, open func(context.Context) (<-chan any, error)) (<-chan any, error) {
	var f *armed
	for _, a := range r.faults {
		if a.kind.inStream() && a.fires(ctx) {
			f = a
			break
		}
	}
	if f == nil {
		return open(ctx)
	}
	injected(ctx, &f.Fault)
	innerCtx, cancel := context.WithCancel(ctx)
	in, err := open(innerCtx)
	if err != nil {
		cancel()
		return nil, err
	}
	out := make(chan any)
	go func() {
		defer close(out)
		defer func() { // the inner stream ends once cancelled and drained
			cancel()
			for range in {
			}
		}()
		if f.after > 0 {
			res := streams.Pump(ctx, in, out, streams.PumpConfig{Limit: f.after})
			if res.End != streams.Completed || res.Chunks < f.after {
				return // it ended as it would have, before the fault
			}
		}
		p := f.provider
		if p == "" {
			p = OpenAI
		}
		switch f.kind {
		case streamBroken:
			streams.Send(ctx, out, fmt.Errorf("chaos: the stream broke after %d chunks: %w", f.after, io.ErrUnexpectedEOF))
		case streamError:
			_, a := inBandEvent(p, "", f.after)
			streams.Send(ctx, out, a.err(p))
		case streamStalled:
			<-ctx.Done()
		}
	}()
	return out, nil
}

// attrFault names the fault a chaos.injected event reports.
const attrFault = attribute.Key("chaos.fault")

// injected records the chaos.injected event on the span in ctx, if it
// records.
func injected(ctx context.Context, f *Fault) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.AddEvent("chaos.injected", trace.WithAttributes(attrFault.String(f.Name())))
}

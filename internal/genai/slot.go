package genai

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Key is the context key of an attempt's *Slot. A retry layer's attempt
// context answers it itself, without a context.WithValue.
type Key struct{}

// From returns the Slot in ctx, nil when ctx is not an attempt's in the
// GenAI mode.
func From(ctx context.Context) *Slot {
	s, _ := ctx.Value(Key{}).(*Slot)
	return s
}

// Slot is the inference of one attempt (one Batch item's): empty until
// the provider adapter sends its request, ended once by the retry layer.
// Its methods may be called from the adapter's goroutines (a stream's
// pump) while the retry layer ends it, so a mutex orders them; none is
// called unless the mode is on.
type Slot struct {
	ins     *Instruments
	stream  bool
	resends int // the request was sent this many times before: http.request.resend_count

	mu      sync.Mutex
	span    trace.Span // nil until started, and when tracing is off
	started bool
	ended   bool
	start   time.Time
	last    time.Time // the last chunk's arrival; zero before the first
	attrs   []attribute.KeyValue
	sets    *sets // attrs as measurement options
	usage   bool
	in, out int64
	reasons bool // the response reported finish reasons
}

// NewSlot returns the Slot of an attempt (stream or not) whose request
// was sent resends times before.
func (ins *Instruments) NewSlot(stream bool, resends int) *Slot {
	return &Slot{ins: ins, stream: stream, resends: resends}
}

// Start begins the inference when the adapter sends its request, with
// the adapter's attributes (gen_ai.operation.name, gen_ai.provider.name,
// gen_ai.request.model, server.address…), and returns ctx holding its
// span, so that the SDK's HTTP spans are its children. A second request in
// the same attempt (a polled background response) is part of the same
// inference.
func (s *Slot) Start(ctx context.Context, attrs []attribute.KeyValue) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.ended {
		if s.span != nil {
			return trace.ContextWithSpan(ctx, s.span)
		}
		return ctx
	}
	s.started, s.start = true, time.Now()
	s.attrs, s.sets = attrs, s.ins.setsOf(attrs)
	if s.ins.tracer == nil {
		return ctx
	}
	kv := make([]attribute.KeyValue, 0, len(attrs)+2)
	kv = append(kv, attrs...)
	if s.stream {
		kv = append(kv, keyStream.Bool(true))
	}
	if s.resends > 0 {
		kv = append(kv, keyResendCount.Int(s.resends))
	}
	ctx, s.span = s.ins.tracer.Start(ctx, s.sets.name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(kv...), trace.WithTimestamp(s.start))
	return ctx
}

// spanName is "{gen_ai.operation.name} {gen_ai.request.model}", or the
// operation alone when the model is unknown.
func spanName(attrs []attribute.KeyValue) string {
	var op, model string
	for _, kv := range attrs {
		switch kv.Key {
		case keyOperation:
			op = kv.Value.AsString()
		case keyRequestModel:
			model = kv.Value.AsString()
		}
	}
	switch {
	case op == "":
		return SpanType
	case model == "":
		return op
	}
	return op + " " + model
}

// Chunk notes a stream's chunk arriving: the first gives the time to the
// first chunk, each later one a time per output chunk.
func (s *Slot) Chunk(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.ended {
		return
	}
	now := time.Now()
	if s.ins.meter {
		if s.last.IsZero() {
			s.ins.firstChunk.Record(ctx, now.Sub(s.start).Seconds(), s.sets.plain)
		} else {
			s.ins.perChunk.Record(ctx, now.Sub(s.last).Seconds(), s.sets.plain)
		}
	}
	s.last = now
}

// Respond notes what the provider reported of its response: its usage,
// when it reported one, and whether it gave finish reasons (the adapter
// puts the response's attributes on the span itself).
func (s *Slot) Respond(hasUsage bool, in, out int64, reasons bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.ended {
		return
	}
	if hasUsage {
		s.usage, s.in, s.out = true, in, out
	}
	s.reasons = s.reasons || reasons
}

// End ends the inference, if it started, with the attempt's error (nil on
// success) and its error.type: the span's status, and the metrics. A
// stream that broke says finish reason "error" unless the provider said
// why it ended.
func (s *Slot) End(ctx context.Context, err error, errorType string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.ended {
		s.ended = true
		return
	}
	s.ended = true
	now := time.Now()
	if s.ins.meter {
		s.record(ctx, now, err, errorType)
	}
	if s.span == nil {
		return
	}
	if err != nil {
		kv := []attribute.KeyValue{keyErrorType.String(errorType)}
		if s.stream && !s.reasons {
			kv = append(kv, keyFinishReasons.StringSlice([]string{"error"}))
		}
		s.span.SetAttributes(kv...)
		s.span.SetStatus(codes.Error, err.Error())
	}
	s.span.End(trace.WithTimestamp(now))
}

// record records the inference's metrics: its duration, and its usage on
// the counters (every inference, 0 with no usage reported) and, for one
// that succeeded, on the per-operation histograms.
func (s *Slot) record(ctx context.Context, now time.Time, err error, errorType string) {
	ins := s.ins
	opts := s.sets.plain
	if err != nil {
		opts = metric.WithAttributeSet(attribute.NewSet(append(slices.Clip(s.attrs), keyErrorType.String(errorType))...))
	}
	ins.duration.Record(ctx, now.Sub(s.start).Seconds(), opts)
	ins.usageInput.Add(ctx, s.in, s.sets.used)
	ins.usageOutput.Add(ctx, s.out, s.sets.used)
	if err == nil && s.usage {
		ins.opInput.Record(ctx, s.in, opts)
		ins.opOutput.Record(ctx, s.out, opts)
	}
}

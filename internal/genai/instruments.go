package genai

import (
	"fmt"
	"slices"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// durationBuckets are the conventions' advised boundaries for the
// inference's duration, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

// chunkBuckets are the advised boundaries for the time per output chunk.
var chunkBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5}

// tokenBuckets are the advised boundaries for the tokens of one operation.
var tokenBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}

// Instruments are one retry layer's tracer and inference metrics.
type Instruments struct {
	tracer                  trace.Tracer // nil: tracing off
	meter                   bool         // false: metrics off
	duration                metric.Float64Histogram
	firstChunk, perChunk    metric.Float64Histogram
	usageInput, usageOutput metric.Int64Counter
	opInput, opOutput       metric.Int64Histogram
	// sets holds the measurement options of the attributes last seen: an
	// adapter passes the same ones on every request, and building an
	// attribute set costs allocations.
	sets atomic.Pointer[sets]
}

// sets are one adapter's attributes as the span's name and as
// measurement options: as they are, and with the usage counters'
// gen_ai.token.modality.
type sets struct {
	attrs       []attribute.KeyValue
	name        string // the span's
	plain, used metric.MeasurementOption
}

// setsOf returns attrs' measurement options, built once for each run of
// calls with the same attributes.
func (ins *Instruments) setsOf(attrs []attribute.KeyValue) *sets {
	if s := ins.sets.Load(); s != nil && slices.Equal(s.attrs, attrs) {
		return s
	}
	s := &sets{
		attrs: slices.Clone(attrs),
		name:  spanName(attrs),
		plain: metric.WithAttributeSet(attribute.NewSet(attrs...)),
		used:  metric.WithAttributeSet(attribute.NewSet(append(slices.Clip(attrs), keyTokenModality.String(modalityUnknown))...)),
	}
	ins.sets.Store(s)
	return s
}

// New makes the instruments on m (nil: metrics off) for tracer (nil:
// tracing off).
func New(tracer trace.Tracer, m metric.Meter) (*Instruments, error) {
	ins := &Instruments{tracer: tracer}
	if m == nil {
		return ins, nil
	}
	ins.meter = true
	var err error
	f := func(in instrument, buckets []float64) metric.Float64Histogram {
		var h metric.Float64Histogram
		if err == nil {
			h, err = m.Float64Histogram(in.Name, metric.WithDescription(in.Brief), metric.WithUnit(in.Unit),
				metric.WithExplicitBucketBoundaries(buckets...))
			err = wrap(in, err)
		}
		return h
	}
	c := func(in instrument) metric.Int64Counter {
		var h metric.Int64Counter
		if err == nil {
			h, err = m.Int64Counter(in.Name, metric.WithDescription(in.Brief), metric.WithUnit(in.Unit))
			err = wrap(in, err)
		}
		return h
	}
	i := func(in instrument) metric.Int64Histogram {
		var h metric.Int64Histogram
		if err == nil {
			h, err = m.Int64Histogram(in.Name, metric.WithDescription(in.Brief), metric.WithUnit(in.Unit),
				metric.WithExplicitBucketBoundaries(tokenBuckets...))
			err = wrap(in, err)
		}
		return h
	}
	ins.duration = f(mDuration, durationBuckets)
	ins.firstChunk = f(mFirstChunk, durationBuckets)
	ins.perChunk = f(mPerChunk, chunkBuckets)
	ins.usageInput, ins.usageOutput = c(mUsageInput), c(mUsageOutput)
	ins.opInput, ins.opOutput = i(mOpInput), i(mOpOutput)
	if err != nil {
		return nil, err
	}
	return ins, nil
}

func wrap(in instrument, err error) error {
	if err != nil {
		return fmt.Errorf("retry: metric %s: %w", in.Name, err)
	}
	return nil
}

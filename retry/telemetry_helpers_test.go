package retry_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/internal/spantree"
	"github.com/steadfast-go/steadfast/retry"
)

// recorder is a real OpenTelemetry SDK whose spans and metrics a test reads.
type recorder struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newRecorder() *recorder {
	r := &recorder{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	return r
}

func (r *recorder) options() []retry.Option {
	return []retry.Option{retry.WithTracerProvider(r.tp), retry.WithMeterProvider(r.mp)}
}

// tracer is for inner Runnables that make spans of their own.
func (r *recorder) tracer() trace.Tracer { return r.tp.Tracer("inner") }

// ended returns the ended spans with the given name, in end order.
func (r *recorder) ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range r.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// one returns the single ended span with the given name.
func (r *recorder) one(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	spans := r.ended(name)
	if len(spans) != 1 {
		t.Fatalf("ended %q spans = %d, want 1", name, len(spans))
	}
	return spans[0]
}

// attrs returns a span's attributes as a map of their emitted forms.
func attrs(kvs []attribute.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// wantAttrs checks that got has every wanted attribute, and none of absent.
func wantAttrs(t *testing.T, what string, kvs []attribute.KeyValue, want map[string]string, absent ...string) {
	t.Helper()
	got := attrs(kvs)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: attribute %s = %q, want %q (all: %v)", what, k, got[k], v, got)
		}
	}
	for _, k := range absent {
		if _, ok := got[k]; ok {
			t.Errorf("%s: attribute %s = %q, want it absent", what, k, got[k])
		}
	}
}

// points flattens the collected metrics: instrument name → "k=v,k=v"
// attribute set → value (sum for counters, count/sum for histograms).
func (r *recorder) points(t *testing.T) map[string]map[string]string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != retry.ScopeName {
			t.Errorf("metric scope = %q, want %q", sm.Scope.Name, retry.ScopeName)
		}
		for _, m := range sm.Metrics {
			byAttrs := map[string]string{}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					byAttrs[setString(p.Attributes)] = fmt.Sprint(p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					byAttrs[setString(p.Attributes)] = fmt.Sprintf("count=%d sum=%g", p.Count, p.Sum)
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					byAttrs[setString(p.Attributes)] = fmt.Sprintf("count=%d sum=%d", p.Count, p.Sum)
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					byAttrs[setString(p.Attributes)] = fmt.Sprintf("%.3f", p.Value)
				}
			default:
				t.Fatalf("metric %s has unexpected data %T", m.Name, m.Data)
			}
			out[m.Name] = byAttrs
		}
	}
	return out
}

func setString(s attribute.Set) string {
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, string(kv.Key)+"="+kv.Value.String())
	}
	return strings.Join(parts, ",")
}

// tree renders the ended spans as an indented tree of names, kinds,
// attributes, events and statuses, without ids or timestamps.
func (r *recorder) tree() string {
	return spantree.Render(r.spans.Ended(), spantree.Options{Kind: true})
}

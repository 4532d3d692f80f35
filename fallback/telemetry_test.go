package fallback_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/mock"
)

func TestCallSpanAndSwitchesCounter(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tracer := tp.Tracer("model")
	model := func(name string, err error) core.Runnable {
		return mock.Named(name, core.RunnableFunc(func(ctx context.Context, in any, _ ...core.Option) (any, error) {
			_, span := tracer.Start(ctx, name+".call")
			defer span.End()
			return in, err
		}))
	}
	r, err := fallback.New([]core.Runnable{model("a", localError{}), model("b", nil)},
		fallback.WithTracerProvider(tp), fallback.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(t.Context(), "q"); err != nil {
		t.Fatal(err)
	}
	var call sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "fallback.invoke" {
			call = s
		}
	}
	if call == nil {
		t.Fatal("no fallback.invoke span")
	}
	got := map[string]string{}
	for _, kv := range call.Attributes() {
		got[string(kv.Key)] = kv.Value.String()
	}
	if got["fallback.candidate"] != "1" || got["fallback.candidate.name"] != "b" || got["fallback.switches"] != "1" || call.Status().Code != codes.Unset {
		t.Errorf("call span attributes = %v, status %v, want candidate 1 (b) after 1 switch", got, call.Status())
	}
	if evs := call.Events(); len(evs) != 1 || evs[0].Name != "fallback.switch" {
		t.Errorf("events = %v, want one fallback.switch", evs)
	}
	for _, s := range rec.Ended() {
		if (s.Name() == "a.call" || s.Name() == "b.call") && s.Parent().SpanID() != call.SpanContext().SpanID() {
			t.Errorf("%s is not a child of the call span", s.Name())
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "fallback.switches" {
				for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
					total += p.Value
				}
			}
		}
	}
	if total != 1 {
		t.Errorf("fallback.switches = %d, want 1", total)
	}
}

func TestInvokePanicPropagatesWithSpanEnded(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	boom := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { panic("boom") })
	r, err := fallback.New([]core.Runnable{boom}, fallback.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Errorf("recovered %v, want boom", v)
			}
		}()
		_, _ = r.Invoke(t.Context(), "q")
	}()
	if spans := rec.Ended(); len(spans) != 1 || spans[0].Status().Code != codes.Error {
		t.Errorf("ended spans = %v, want the call span with status Error", spans)
	}
}

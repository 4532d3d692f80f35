package hedge_test

import (
	"testing"
	"testing/synctest"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadfast-go/steadfast/hedge"
	"github.com/steadfast-go/steadfast/internal/mock"
)

func TestHedgeSpansAndCounter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		inner := mock.New(mock.Result{Value: "slow", Delay: time.Second}, mock.Result{Value: "fast"})
		r, err := hedge.New(inner, hedge.Config{Delay: 100 * time.Millisecond, MaxHedges: 1},
			hedge.WithTracerProvider(tp), hedge.WithMeterProvider(mp))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the loser's span ends on its goroutine
		var call sdktrace.ReadOnlySpan
		attempts := map[string]sdktrace.ReadOnlySpan{}
		for _, s := range rec.Ended() {
			switch s.Name() {
			case "hedge.invoke":
				call = s
			case "hedge.attempt":
				a := map[string]string{}
				for _, kv := range s.Attributes() {
					a[string(kv.Key)] = kv.Value.String()
				}
				attempts[a["hedge.hedged"]+"/"+a["hedge.won"]] = s
			}
		}
		if call == nil || len(attempts) != 2 || attempts["true/true"] == nil || attempts["false/false"] == nil {
			t.Fatalf("spans: call %v, attempts (hedged/won) %v, want a losing first attempt and a winning hedge", call, attempts)
		}
		for _, a := range attempts {
			if a.Parent().SpanID() != call.SpanContext().SpanID() {
				t.Error("an attempt span is not a child of the call span")
			}
		}
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(t.Context(), &rm); err != nil {
			t.Fatal(err)
		}
		byWon := map[string]int64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != "hedge.attempts" {
					continue
				}
				for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
					v, _ := p.Attributes.Value("hedge.won")
					byWon[v.String()] += p.Value
				}
			}
		}
		if byWon["true"] != 1 || byWon["false"] != 1 {
			t.Errorf("hedge.attempts by won = %v, want 1 and 1", byWon)
		}
	})
}

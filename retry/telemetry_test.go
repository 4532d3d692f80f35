package retry_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// tracedInner wraps r so each call makes a span of its own, as an
// instrumented LLM client would.
func tracedInner(rec *recorder, r core.Runnable) core.Runnable {
	return core.RunnableFunc(func(ctx context.Context, in any, opts ...core.Option) (any, error) {
		ctx, span := rec.tracer().Start(ctx, "llm.request")
		defer span.End()
		return r.Invoke(ctx, in, opts...)
	})
}

func TestTelemetrySuccessFirstTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		r := newRetry(t, tracedInner(rec, mock.New(mock.OK("ok"))), testConfig(), rec.options()...)
		if _, err := r.Invoke(t.Context(), "q", core.WithOperation("llm")); err != nil {
			t.Fatal(err)
		}
		call := rec.one(t, "retry.invoke")
		if call.SpanKind() != trace.SpanKindInternal || call.Status().Code != codes.Unset {
			t.Errorf("call span kind, status = %v, %v, want internal, unset", call.SpanKind(), call.Status().Code)
		}
		wantAttrs(t, "call span", call.Attributes(), map[string]string{
			"retry.operation": "llm", "retry.max_retries": "3", "retry.attempts": "1", "retry.outcome": "success",
		}, "error.type")
		if call.InstrumentationScope().Name != retry.ScopeName {
			t.Errorf("scope = %q, want %q", call.InstrumentationScope().Name, retry.ScopeName)
		}
		att := rec.one(t, "retry.attempt")
		wantAttrs(t, "attempt span", att.Attributes(), map[string]string{"retry.attempt": "1"}, "error.type", "retry.retryable")
		if att.Parent().SpanID() != call.SpanContext().SpanID() {
			t.Error("attempt span is not a child of the call span")
		}
		inner := rec.one(t, "llm.request")
		if inner.Parent().SpanID() != att.SpanContext().SpanID() {
			t.Error("the inner Runnable's span is not a child of its attempt span")
		}
		m := rec.points(t)
		base := "retry.method=invoke,retry.operation=llm"
		if got := m["retry.attempts"][base]; got != "1" {
			t.Errorf("retry.attempts = %v, want 1 at %s", m["retry.attempts"], base)
		}
		if got := m["retry.calls"][base+",retry.outcome=success"]; got != "1" {
			t.Errorf("retry.calls = %v, want 1 success", m["retry.calls"])
		}
		if len(m["retry.backoff.duration"]) != 0 {
			t.Errorf("retry.backoff.duration = %v, want none", m["retry.backoff.duration"])
		}
	})
}

func TestTelemetrySuccessOnThirdAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		e503 := &mock.HTTPError{Code: 503}
		inner := tracedInner(rec, mock.New(mock.Fail(e503), mock.Fail(e503), mock.OK("ok")))
		r := newRetry(t, inner, testConfig(), rec.options()...)
		if _, err := r.Invoke(t.Context(), "q", core.WithOperation("llm")); err != nil {
			t.Fatal(err)
		}
		call := rec.one(t, "retry.invoke")
		if call.Status().Code != codes.Unset {
			t.Errorf("call status = %v, want unset: earlier failures do not fail the call", call.Status().Code)
		}
		wantAttrs(t, "call span", call.Attributes(), map[string]string{"retry.attempts": "3", "retry.outcome": "success"}, "error.type")
		events := call.Events()
		if len(events) != 2 {
			t.Fatalf("call span events = %d, want 2", len(events))
		}
		for i, ev := range events {
			wantAttrs(t, "backoff event", ev.Attributes, map[string]string{
				"retry.attempt": []string{"1", "2"}[i], "retry.backoff": []string{"1", "2"}[i],
			})
			if ev.Name != "retry.backoff" {
				t.Errorf("event name = %q, want retry.backoff", ev.Name)
			}
		}
		attempts := rec.ended("retry.attempt")
		if len(attempts) != 3 {
			t.Fatalf("attempt spans = %d, want 3", len(attempts))
		}
		for i, a := range attempts[:2] {
			if a.Status().Code != codes.Error {
				t.Errorf("attempt %d status = %v, want error", i+1, a.Status().Code)
			}
			wantAttrs(t, "failed attempt", a.Attributes(), map[string]string{
				"retry.attempt": []string{"1", "2"}[i], "error.type": "503", "retry.retryable": "true",
				"retry.backoff": []string{"1", "2"}[i], "retry.backoff.source": "computed",
			})
		}
		if attempts[2].Status().Code != codes.Unset {
			t.Errorf("third attempt status = %v, want unset", attempts[2].Status().Code)
		}
		for i, s := range rec.ended("llm.request") {
			if s.Parent().SpanID() != attempts[i].SpanContext().SpanID() {
				t.Errorf("inner span %d is not a child of attempt %d", i+1, i+1)
			}
		}
		m := rec.points(t)
		base := "retry.method=invoke,retry.operation=llm"
		if got := m["retry.attempts"]["error.type=503,"+base]; got != "2" {
			t.Errorf("failed retry.attempts = %v, want 2 with error.type=503", m["retry.attempts"])
		}
		if got := m["retry.attempts"][base]; got != "1" {
			t.Errorf("successful retry.attempts = %v, want 1", m["retry.attempts"])
		}
		if got := m["retry.backoff.duration"][base]; got != "count=2 sum=3" {
			t.Errorf("retry.backoff.duration = %v, want count=2 sum=3", m["retry.backoff.duration"])
		}
	})
}

func TestTelemetryExhaustedAndPermanent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		cfg := testConfig()
		cfg.MaxRetries = 1
		r := newRetry(t, mock.New(mock.Fail(&mock.HTTPError{Code: 429})), cfg, rec.options()...)
		_, _ = r.Invoke(t.Context(), "q")
		call := rec.one(t, "retry.invoke")
		if call.Status().Code != codes.Error {
			t.Errorf("call status = %v, want error", call.Status().Code)
		}
		wantAttrs(t, "exhausted call", call.Attributes(), map[string]string{
			"retry.attempts": "2", "retry.outcome": "exhausted", "error.type": "429",
		}, "retry.operation")
		last := rec.ended("retry.attempt")[1]
		wantAttrs(t, "last attempt", last.Attributes(), map[string]string{"retry.retryable": "true"}, "retry.backoff", "retry.backoff.source")

		rec.spans.Reset()
		r = newRetry(t, mock.New(mock.Fail(retry.Permanent(errors.New("bad prompt")))), cfg, rec.options()...)
		_, _ = r.Invoke(t.Context(), "q")
		wantAttrs(t, "permanent call", rec.one(t, "retry.invoke").Attributes(), map[string]string{
			"retry.attempts": "1", "retry.outcome": "not_retryable", "error.type": "*errors.errorString",
		})
		wantAttrs(t, "permanent attempt", rec.one(t, "retry.attempt").Attributes(), map[string]string{
			"retry.retryable": "false", "error.type": "*errors.errorString",
		}, "retry.backoff")
		m := rec.points(t)
		if got := m["retry.calls"]["error.type=429,retry.method=invoke,retry.outcome=exhausted"]; got != "1" {
			t.Errorf("retry.calls = %v, want 1 exhausted with error.type=429", m["retry.calls"])
		}
		if got := m["retry.calls"]["error.type=*errors.errorString,retry.method=invoke,retry.outcome=not_retryable"]; got != "1" {
			t.Errorf("retry.calls = %v, want 1 not_retryable", m["retry.calls"])
		}
	})
}

func TestTelemetryCancelDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		ctx, cancel := context.WithCancel(t.Context())
		r := newRetry(t, mock.New(mock.Fail(errTransient)), testConfig(), append(rec.options(),
			retry.WithOnRetry(func(context.Context, retry.RetryEvent) { time.AfterFunc(time.Millisecond, cancel) }))...)
		_, _ = r.Invoke(ctx, "q")
		call := rec.one(t, "retry.invoke")
		wantAttrs(t, "canceled call", call.Attributes(), map[string]string{
			"retry.attempts": "1", "retry.outcome": "canceled", "error.type": "canceled",
		})
		if len(call.Events()) != 1 || call.Status().Code != codes.Error {
			t.Errorf("events, status = %d, %v, want 1 backoff event and error", len(call.Events()), call.Status().Code)
		}
		m := rec.points(t)
		if got := m["retry.calls"]["error.type=canceled,retry.method=invoke,retry.outcome=canceled"]; got != "1" {
			t.Errorf("retry.calls = %v, want 1 canceled", m["retry.calls"])
		}
	})
}

func TestTelemetryRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		inner := mock.New(mock.Fail(&mock.HTTPError{Code: 429, After: 7 * time.Second}), mock.OK("ok"))
		r := newRetry(t, inner, testConfig(), rec.options()...)
		_, _ = r.Invoke(t.Context(), "q")
		wantAttrs(t, "attempt", rec.ended("retry.attempt")[0].Attributes(), map[string]string{
			"retry.backoff": "7", "retry.backoff.source": "retry_after", "error.type": "429",
		})
		wantAttrs(t, "event", rec.one(t, "retry.invoke").Events()[0].Attributes, map[string]string{"retry.backoff": "7"})
		if got := rec.points(t)["retry.backoff.duration"]["retry.method=invoke"]; got != "count=1 sum=7" {
			t.Errorf("retry.backoff.duration = %q, want count=1 sum=7", got)
		}
	})
}

func TestTelemetryBatchPartialFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		inner := mock.New().ForInput(1, mock.Fail(errTransient), mock.OK("one")).ForInput(2, mock.Fail(&mock.HTTPError{Code: 400}))
		r := newRetry(t, inner, testConfig(), rec.options()...)
		_, err := r.Batch(t.Context(), batchInputs(3), core.WithOperation("retriever"))
		if err == nil {
			t.Fatal("Batch() error = nil, want item 2's failure")
		}
		call := rec.one(t, "retry.batch")
		wantAttrs(t, "batch call", call.Attributes(), map[string]string{
			"retry.operation": "retriever", "retry.attempts": "2", "retry.outcome": "not_retryable", "error.type": "400",
		})
		rounds := rec.ended("retry.attempt")
		if len(rounds) != 2 {
			t.Fatalf("attempt spans = %d, want 2 rounds", len(rounds))
		}
		wantAttrs(t, "round 1", rounds[0].Attributes(), map[string]string{
			"retry.attempt": "1", "retry.batch.items": "3", "retry.retryable": "true", "retry.backoff": "1",
		})
		wantAttrs(t, "round 2", rounds[1].Attributes(), map[string]string{"retry.attempt": "2", "retry.batch.items": "1"}, "error.type")
		m := rec.points(t)
		if got := m["retry.calls"]["error.type=400,retry.method=batch,retry.operation=retriever,retry.outcome=not_retryable"]; got != "1" {
			t.Errorf("retry.calls = %v", m["retry.calls"])
		}
	})
}

func TestTelemetryStreamFailuresBeforeAndAfterCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		inner := mock.New(mock.Stream(&mock.HTTPError{Code: 503}), mock.Stream(&mock.HTTPError{Code: 502}, "a", "b"))
		r := newRetry(t, inner, testConfig(), rec.options()...)
		ch, err := r.Stream(t.Context(), "q", core.WithOperation("llm"))
		if err != nil {
			t.Fatal(err)
		}
		<-ch
		if n := len(rec.ended("retry.stream")); n != 0 {
			t.Errorf("call spans ended after the first chunk = %d, want 0: it covers the whole stream", n)
		}
		mock.Drain(ch)
		synctest.Wait()
		call := rec.one(t, "retry.stream")
		wantAttrs(t, "stream call", call.Attributes(), map[string]string{
			"retry.attempts": "2", "retry.outcome": "committed", "retry.stream.chunks": "2", "error.type": "502",
		})
		attempts := rec.ended("retry.attempt")
		if len(attempts) != 2 {
			t.Fatalf("attempt spans = %d, want 2", len(attempts))
		}
		wantAttrs(t, "pre-commit attempt", attempts[0].Attributes(), map[string]string{
			"error.type": "503", "retry.retryable": "true", "retry.backoff": "1",
		})
		wantAttrs(t, "committed attempt", attempts[1].Attributes(), map[string]string{
			"error.type": "502", "retry.retryable": "false",
		}, "retry.backoff")
		if got := rec.points(t)["retry.calls"]["error.type=502,retry.method=stream,retry.operation=llm,retry.outcome=committed"]; got != "1" {
			t.Errorf("retry.calls committed = %q, want 1", got)
		}
	})
}

func TestTelemetrySpanTreeGolden(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		inner := tracedInner(rec, mock.New(
			mock.Fail(&mock.HTTPError{Code: 429, After: 3 * time.Second}),
			mock.Fail(&mock.HTTPError{Code: 503}),
			mock.OK("ok")))
		r := newRetry(t, inner, testConfig(), rec.options()...)
		if _, err := r.Invoke(t.Context(), "q", core.WithOperation("llm.chat")); err != nil {
			t.Fatal(err)
		}
		got := rec.tree()
		path := filepath.Join("testdata", "span_tree_three_attempts.golden")
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if got != string(want) {
			t.Errorf("span tree:\n%s\nwant (%s):\n%s", got, path, want)
		}
	})
}

// countingTracerProvider counts span starts and never records.
type countingTracerProvider struct {
	tnoop.TracerProvider
	starts *atomic.Int64
}

func (p countingTracerProvider) Tracer(string, ...trace.TracerOption) trace.Tracer {
	return countingTracer{starts: p.starts}
}

type countingTracer struct {
	tnoop.Tracer
	starts *atomic.Int64
}

func (t countingTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	t.starts.Add(1)
	return t.Tracer.Start(ctx, name, opts...)
}

func TestTelemetryNotRecordingSkipsAttemptSpans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var starts atomic.Int64
		inner := mock.New(mock.Fail(errTransient), mock.Fail(errTransient), mock.OK("ok"))
		r := newRetry(t, inner, testConfig(), retry.WithTracerProvider(countingTracerProvider{starts: &starts}))
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		if got := starts.Load(); got != 1 {
			t.Errorf("span starts = %d, want 1: only the call span when it is not recording", got)
		}
		// And with a sampling SDK that drops the trace, the same.
		rec := newRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSpanProcessor(rec.spans))
		r = newRetry(t, mock.New(mock.Fail(errTransient), mock.OK("ok")), testConfig(), retry.WithTracerProvider(tp))
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		if n := len(rec.spans.Started()); n != 0 {
			t.Errorf("recorded spans = %d, want 0", n)
		}
	})
}

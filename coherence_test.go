package steadfast_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/attribute"
	noop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/hedge"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// gptModel is a model that knows its name and GenAI call attributes.
type gptModel struct{ core.Runnable }

func (gptModel) Name() string { return "gpt" }
func (gptModel) CallAttributes() []attribute.KeyValue {
	return []attribute.KeyValue{semconv.GenAIRequestModelKey.String("gpt")}
}

// The model's name and call attributes are seen through every decorator
// that wraps one Runnable, in fallback's documented setup and in hedge's.
func TestCallAttributesAndNameSeeThroughDecorators(t *testing.T) {
	model := gptModel{mock.New()}
	cb, err := breaker.New(model, gobreaker.Settings{Name: "gpt"})
	if err != nil {
		t.Fatal(err)
	}
	limited, err := ratelimit.New(cb, ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1)))
	if err != nil {
		t.Fatal(err)
	}
	hedged, err := hedge.New(limited, hedge.Config{Delay: time.Second, MaxHedges: 1})
	if err != nil {
		t.Fatal(err)
	}
	retried, err := retry.New(hedged, retry.RetryConfig{})
	if err != nil {
		t.Fatal(err)
	}
	fb, err := fallback.New([]core.Runnable{retried, mock.New()})
	if err != nil {
		t.Fatal(err)
	}
	if got := fb.CallAttributes(); len(got) != 1 || got[0].Value.AsString() != "gpt" {
		t.Errorf("fallback.CallAttributes() through retry(hedge(ratelimit(breaker(model)))) = %v, want the model's", got)
	}
	if got := core.NameOf(fb); got != "gpt" {
		t.Errorf("core.NameOf(fallback) = %q, want gpt", got)
	}
}

type httpStatusErr int

func (e httpStatusErr) Error() string       { return "upstream" }
func (e httpStatusErr) HTTPStatusCode() int { return int(e) }

// Every decorator names one failure with the same error.type, by DESIGN
// §4's one rule: a status given as HTTPStatusCode is its code, a network
// failure its innermost Go type, a timeout "timeout".
func TestErrorTypeIsTheSameEverywhere(t *testing.T) {
	netErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("refused")}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{httpStatusErr(503), "503"},
		{netErr, "*errors.errorString"},
	} {
		failing := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return nil, tc.err })
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		mp := noop.NewMeterProvider()
		rt, _ := retry.New(failing, retry.RetryConfig{}, retry.WithTracerProvider(tp), retry.WithMeterProvider(mp))
		fb, _ := fallback.New([]core.Runnable{failing}, fallback.WithTracerProvider(tp), fallback.WithMeterProvider(mp))
		hd, _ := hedge.New(failing, hedge.Config{Delay: time.Second, MaxHedges: 1}, hedge.WithTracerProvider(tp), hedge.WithMeterProvider(mp))
		for _, r := range []core.Runnable{rt, fb, hd} {
			if _, err := r.Invoke(t.Context(), "q"); err == nil {
				t.Fatalf("%T.Invoke() = nil error, want %v", r, tc.err)
			}
		}
		got := map[string]string{}
		for _, s := range rec.Ended() {
			for _, kv := range s.Attributes() {
				if kv.Key == semconv.ErrorTypeKey {
					got[s.Name()] = kv.Value.AsString()
				}
			}
		}
		for _, span := range []string{"retry.invoke", "retry.attempt", "fallback.invoke", "hedge.invoke", "hedge.attempt"} {
			if got[span] != tc.want {
				t.Errorf("%v: error.type on %s = %q, want %q (all: %v)", tc.err, span, got[span], tc.want, got)
			}
		}
	}
}

// A hedged call that no attempt answers fails with a *hedge.Error naming
// each attempt's failure, so "hedging gave up" is told from an inner
// failure; a cancelled call's error reaches the context's.
func TestHedgeErrorNamesEveryAttempt(t *testing.T) {
	first, second := errors.New("first"), errors.New("second")
	n := 0
	failing := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
		n++
		if n == 1 {
			return nil, first
		}
		return nil, second
	})
	hd, err := hedge.New(failing, hedge.Config{Delay: time.Second, MaxHedges: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = hd.Invoke(t.Context(), "q")
	he, ok := errors.AsType[*hedge.Error](err)
	if !ok || len(he.Errs) != 2 || !errors.Is(err, first) || !errors.Is(err, second) {
		t.Fatalf("Invoke() error = %v, want a *hedge.Error of both attempts' failures", err)
	}
	if got, want := err.Error(), "hedge: 2 attempt(s) failed; [0] first; [1] second"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	slow := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	hd, _ = hedge.New(slow, hedge.Config{Delay: time.Second, MaxHedges: 1})
	_, err = hd.Invoke(ctx, "q")
	if _, ok := errors.AsType[*hedge.Error](err); !ok || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Invoke() error = %v, want a *hedge.Error reaching context.Canceled", err)
	}
}

package llmhttptest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/chaos"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/retry"
)

// Routes is one provider for CheckRoutes: how to build its Runnable, and
// its wire format's answers and overflow.
type Routes struct {
	// New builds the provider's Runnable on client.
	New func(client *http.Client) core.Runnable
	// Text reads an answer's text, or a chunk's.
	Text func(any) string
	// Answer and StreamAnswer reply "Hello from the fallback", whole and
	// as a stream.
	Answer, StreamAnswer Reply
	// Overflow is chaos's context overflow in the provider's numbers.
	Overflow chaos.Fault
}

// RouteConfig is docs/retrying.md's policy for an LLM call, with the
// timeouts docs/streams.md gives.
var RouteConfig = retry.RetryConfig{
	MaxRetries: 3, InitialBackoff: 500 * time.Millisecond, MaxBackoff: 5 * time.Second,
	PerAttemptTimeout: 30 * time.Second, FirstChunkTimeout: 20 * time.Second,
}

const fallbackAnswer = "Hello from the fallback"

// CheckRoutes checks, through the provider's real SDK, DESIGN §11's
// silent route rule in the chain docs/deployments.md recommends (fallback
// over retry over the provider): a primary that sends nothing until the
// attempt's timeout, sends a stream's headers and no first chunk, closes
// the connection after 15 s of silence, or says the prompt is over its
// context length is sent exactly one request, and the fallback answers.
// Alone, the silent primary is retried as before.
func CheckRoutes(t *testing.T, p Routes) {
	for _, tc := range []struct {
		name    string
		primary func() *Silent
		stream  bool
		within  time.Duration // the fallback's answer comes within
	}{
		{name: "hangs", primary: Hanging, within: RouteConfig.PerAttemptTimeout},
		// FirstChunkTimeout counts from the request: no headers is no chunk.
		{name: "hangs/stream", primary: Hanging, stream: true, within: RouteConfig.FirstChunkTimeout},
		{name: "no first chunk/stream", primary: HeadersOnly, stream: true, within: RouteConfig.FirstChunkTimeout},
		{name: "closes after 15s", primary: func() *Silent { return ClosingAfter(15 * time.Second) }, within: 15 * time.Second},
		{name: "context overflow", primary: func() *Silent { return overflowing(p.Overflow) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				primary := tc.primary()
				second := New(p.Answer)
				if tc.stream {
					second = New(p.StreamAnswer)
				}
				f, err := fallback.New([]core.Runnable{routed(t, p, primary), routed(t, p, second)})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				text, err := call(t.Context(), f, p.Text, tc.stream)
				if err != nil || text != fallbackAnswer {
					t.Fatalf("answer = %q, %v; want the fallback's", text, err)
				}
				if took := time.Since(start); took > tc.within {
					t.Errorf("the fallback answered after %v, want within %v", took, tc.within)
				}
				if n := primary.Requests(); n != 1 {
					t.Errorf("the primary was sent %d requests, want 1", n)
				}
			})
		})
	}
	t.Run("no fallback", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			primary := Hanging()
			_, err := routed(t, p, primary).Invoke(t.Context(), "Say hello")
			re, ok := errors.AsType[*retry.Error](err)
			if !ok || re.Outcome != retry.OutcomeExhausted || re.Attempts != 4 || primary.Requests() != 4 {
				t.Fatalf("Invoke() = %v after %d requests, want exhausted after 4", err, primary.Requests())
			}
		})
	})
}

// routed is p's Runnable over transport, behind a retry layer under
// RouteConfig.
func routed(t *testing.T, p Routes, transport http.RoundTripper) core.Runnable {
	t.Helper()
	return routedWith(t, p.New, RouteConfig, transport)
}

// routedWith is the Runnable newRunnable builds over transport, behind a
// retry layer under cfg.
func routedWith(t *testing.T, newRunnable func(*http.Client) core.Runnable, cfg retry.RetryConfig, transport http.RoundTripper) core.Runnable {
	t.Helper()
	r, err := retry.New(newRunnable(&http.Client{Transport: transport}), cfg,
		retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// call invokes r, or streams it to its end, and returns the answer's text.
func call(ctx context.Context, r core.Runnable, text func(any) string, stream bool) (string, error) {
	if !stream {
		out, err := r.Invoke(ctx, "Say hello")
		if err != nil {
			return "", err
		}
		return text(out), nil
	}
	ch, err := r.Stream(ctx, "Say hello")
	if err != nil {
		return "", err
	}
	joined, last := Drain(ch, text)
	if err, ok := last.(error); ok {
		return joined, err
	}
	return joined, nil
}

// Silent is a server that cannot serve: it counts the requests it is sent
// and answers none of them.
type Silent struct {
	answer   func(req *http.Request) (*http.Response, error)
	requests atomic.Int32
}

// Hanging is a Silent that sends nothing until the request ends.
func Hanging() *Silent {
	return &Silent{answer: func(req *http.Request) (*http.Response, error) {
		closeBody(req)
		<-req.Context().Done()
		return nil, req.Context().Err()
	}}
}

// ClosingAfter is a Silent that closes the connection after wait with no
// byte sent: the client reads EOF.
func ClosingAfter(wait time.Duration) *Silent {
	return &Silent{answer: func(req *http.Request) (*http.Response, error) {
		closeBody(req)
		select {
		case <-time.After(wait):
			return nil, io.EOF
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}}
}

// HeadersOnly is a Silent that sends a stream's headers and then nothing.
func HeadersOnly() *Silent {
	return &Silent{answer: func(req *http.Request) (*http.Response, error) {
		closeBody(req)
		return &http.Response{
			Status: "200 OK", StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header:  http.Header{"Content-Type": {"text/event-stream"}},
			Body:    io.NopCloser(silence{req.Context()}),
			Request: req,
		}, nil
	}}
}

// overflowing is a server that answers every request with fault, a
// context overflow.
func overflowing(fault chaos.Fault) *Silent {
	t := chaos.Transport(New(), fault.First(1<<20))
	return &Silent{answer: t.RoundTrip}
}

// RoundTrip counts req and answers it as s does.
func (s *Silent) RoundTrip(req *http.Request) (*http.Response, error) {
	s.requests.Add(1)
	return s.answer(req)
}

// Requests returns how many requests s was sent.
func (s *Silent) Requests() int { return int(s.requests.Load()) }

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// silence is a body that yields nothing until its request ends.
type silence struct{ ctx context.Context }

func (s silence) Read([]byte) (int, error) {
	<-s.ctx.Done()
	return 0, s.ctx.Err()
}

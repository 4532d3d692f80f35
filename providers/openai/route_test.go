package openai_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3/option"
	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/chaos"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// closesSilently is a server that accepts each request and, after wait
// with no byte sent, closes the connection: the client reads EOF.
type closesSilently struct {
	wait     time.Duration
	requests atomic.Int32
}

func (s *closesSilently) RoundTrip(req *http.Request) (*http.Response, error) {
	s.requests.Add(1)
	if req.Body != nil {
		_ = req.Body.Close()
	}
	select {
	case <-time.After(s.wait):
		return nil, io.EOF
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

// headersOnly is a server that answers each request with a stream's
// headers and then sends nothing.
type headersOnly struct{ requests atomic.Int32 }

func (s *headersOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	s.requests.Add(1)
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return &http.Response{
		Status: "200 OK", StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(silence{req.Context()}),
		Request: req,
	}, nil
}

// silence is a body that yields nothing until its request ends.
type silence struct{ ctx context.Context }

func (s silence) Read([]byte) (int, error) {
	<-s.ctx.Done()
	return 0, s.ctx.Err()
}

// counting counts the requests a RoundTripper is sent.
type counting struct {
	base     http.RoundTripper
	requests atomic.Int32
}

func (c *counting) RoundTrip(req *http.Request) (*http.Response, error) {
	c.requests.Add(1)
	return c.base.RoundTrip(req)
}

// routeCfg is docs/retrying.md's policy for an LLM call, with the
// timeouts docs/streams.md gives.
var routeCfg = retry.RetryConfig{
	MaxRetries: 3, InitialBackoff: 500 * time.Millisecond, MaxBackoff: 5 * time.Second,
	PerAttemptTimeout: 30 * time.Second, FirstChunkTimeout: 20 * time.Second,
}

// retried is openai.Chat over transport, behind a retry layer under cfg.
func retried(t *testing.T, transport http.RoundTripper, cfg retry.RetryConfig) core.Runnable {
	t.Helper()
	r, err := retry.New(openai.NewChat(model, option.WithAPIKey("test-key"), option.WithBaseURL("http://openai.test/v1/"),
		option.WithHTTPClient(&http.Client{Transport: transport})), cfg,
		retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A primary that cannot serve (it sends nothing until the attempt's
// timeout, closes the connection after a long silence, or says the prompt
// is over its context length) is tried once and the fallback answers: the
// chain docs/deployments.md recommends, fallback over retry over the real
// SDK. Alone, the same silent primary is retried as before.
func TestAPrimaryThatCannotServeIsTriedOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		primary func() (http.RoundTripper, func() int)
		stream  bool
		within  time.Duration // the fallback's answer comes within
	}{
		{name: "hangs", primary: hangs, within: 31 * time.Second},
		// openai-go's stream is created once the headers come: a server
		// that sends none is bounded by PerAttemptTimeout, FirstChunkTimeout
		// starts after.
		{name: "hangs/stream", primary: hangs, stream: true, within: 31 * time.Second},
		{name: "no first chunk/stream", primary: func() (http.RoundTripper, func() int) {
			s := &headersOnly{}
			return s, func() int { return int(s.requests.Load()) }
		}, stream: true, within: 21 * time.Second},
		{name: "closes after 15s", primary: func() (http.RoundTripper, func() int) {
			s := &closesSilently{wait: 15 * time.Second}
			return s, func() int { return int(s.requests.Load()) }
		}, within: 16 * time.Second},
		{name: "context overflow", primary: func() (http.RoundTripper, func() int) {
			c := &counting{base: chaos.Transport(llmhttptest.New(), chaos.ContextOverflow(128000, 126000, 4000).First(100))}
			return c, func() int { return int(c.requests.Load()) }
		}, within: time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				primary, requests := tc.primary()
				second := llmhttptest.New(completion("Hello from the fallback"))
				if tc.stream {
					second = llmhttptest.New(llmhttptest.SSE(chunk("Hello from the fallback"), "[DONE]"))
				}
				f, err := fallback.New([]core.Runnable{retried(t, primary, routeCfg), retried(t, second, routeCfg)})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				text, err := call(t.Context(), f, tc.stream)
				if err != nil || text != "Hello from the fallback" {
					t.Fatalf("answer = %q, %v; want the fallback's", text, err)
				}
				if took := time.Since(start); took > tc.within {
					t.Errorf("the fallback answered after %v, want within %v", took, tc.within)
				}
				if n := requests(); n != 1 {
					t.Errorf("the primary was sent %d requests, want 1", n)
				}
			})
		})
	}
}

func TestASilentProviderWithoutAFallbackIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		primary, requests := hangs()
		_, err := retried(t, primary, routeCfg).Invoke(t.Context(), "q")
		re, ok := errors.AsType[*retry.Error](err)
		if !ok || re.Outcome != retry.OutcomeExhausted || re.Attempts != 4 {
			t.Fatalf("Invoke() = %v, want exhausted after 4 attempts", err)
		}
		if n := requests(); n != 4 {
			t.Errorf("requests = %d, want 4", n)
		}
	})
}

// hangs is a server that accepts each request and never answers.
func hangs() (http.RoundTripper, func() int) {
	c := &counting{base: chaos.Transport(llmhttptest.New(), chaos.Hang().First(100))}
	return c, func() int { return int(c.requests.Load()) }
}

// call invokes r, or streams it to its end, and returns the answer's text.
func call(ctx context.Context, r core.Runnable, stream bool) (string, error) {
	if !stream {
		out, err := r.Invoke(ctx, "Say hello")
		if err != nil {
			return "", err
		}
		return openai.Text(out), nil
	}
	ch, err := r.Stream(ctx, "Say hello")
	if err != nil {
		return "", err
	}
	text, last := llmhttptest.Drain(ch, openai.Text)
	if err, ok := last.(error); ok {
		return text, err
	}
	return text, nil
}

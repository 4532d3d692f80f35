package chaos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadfast-go/steadfast/chaos"
)

// body is a request or response body that knows whether it was closed.
type body struct {
	io.Reader
	closed atomic.Bool
}

func (b *body) Close() error { b.closed.Store(true); return nil }

// server is an in-process RoundTripper: it answers every request with a
// copy of its response (an SSE stream when events is set) and keeps the
// requests it was given.
type server struct {
	events []string
	mu     sync.Mutex
	got    []*http.Request
	bodies []*body
}

func (s *server) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, req)
	h := http.Header{"Content-Type": {"application/json"}}
	b := &body{Reader: strings.NewReader(`{"ok":true}`)}
	if s.events != nil {
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		b = &body{Reader: strings.NewReader(strings.Join(s.events, ""))}
	}
	s.bodies = append(s.bodies, b)
	return &http.Response{StatusCode: 200, Header: h, Body: b, Request: req}, nil
}

func post(t *testing.T, rt http.RoundTripper, url string) (*http.Response, *body) {
	t.Helper()
	sent := &body{Reader: strings.NewReader(`{"model":"m","stream":true}`)}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, sent)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, sent
}

// A request no fault fires for goes to the server as it came, and the
// server's response comes back as it gave it.
func TestTransportLeavesAloneWhatItDoesNotInjectInto(t *testing.T) {
	never := func(context.Context) bool { return false }
	for _, events := range [][]string{nil, {"data: 1\n\n", "data: 2\n\n"}} {
		srv := &server{events: events}
		rt := chaos.Transport(srv, chaos.Overloaded().When(never), chaos.ServerError().Rate(0, 1),
			chaos.StreamBroken(1).When(never), chaos.StreamError(0).Rate(0, 1))
		sent := &body{Reader: strings.NewReader(`{"model":"m"}`)}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://api.openai.com/v1/chat/completions", sent)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if len(srv.got) != 1 || srv.got[0] != req || resp.Body != srv.bodies[0] {
			t.Errorf("events %v: the request or the response was not passed as it was", events)
		}
		got, _ := io.ReadAll(resp.Body)
		if want := strings.Join(events, ""); events != nil && string(got) != want {
			t.Errorf("body %q, want %q", got, want)
		}
	}
}

// Each fault is the provider's answer on the wire: the provider found by
// the request's host, or its path, or As.
func TestTransportAnswersInTheProvidersFormat(t *testing.T) {
	for _, tc := range []struct {
		url    string
		fault  chaos.Fault
		status int
		header string // name=value
		path   string // a JSON path of the body, and its value
		value  any
	}{
		{"https://api.openai.com/v1/chat/completions", chaos.RateLimited(2 * time.Second), 429, "Retry-After-Ms=2000", "error.code", "rate_limit_exceeded"},
		{"https://api.openai.com/v1/responses", chaos.RateLimitedInBody(2190 * time.Millisecond), 429, "Retry-After=", "error.message", "Rate limit reached for gpt-4o-mini in organization org-chaos on tokens per min (TPM): Limit 30000, Used 29500, Requested 2000. Please try again in 2.19s."},
		{"https://api.openai.com/v1/chat/completions", chaos.QuotaExhausted(), 429, "Retry-After=", "error.code", "insufficient_quota"},
		{"http://127.0.0.1:8000/v1/chat/completions", chaos.ContextOverflow(4096, 4000, 500), 400, "", "error.code", "context_length_exceeded"},
		{"https://api.anthropic.com/v1/messages", chaos.Overloaded(), 529, "Request-Id=req_chaos", "error.type", "overloaded_error"},
		{"http://127.0.0.1:8000/v1/messages", chaos.RateLimited(1500 * time.Millisecond), 429, "Retry-After=2", "error.type", "rate_limit_error"},
		{"https://api.openai.com/v1/chat/completions", chaos.Overloaded().As(chaos.Anthropic), 529, "", "type", "error"},
		{"https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent", chaos.RateLimited(1500 * time.Millisecond), 429, "", "error.details.0.retryDelay", "1.5s"},
		{"http://127.0.0.1:8000/v1beta/models/m:streamGenerateContent", chaos.ServerError(), 500, "", "error.status", "INTERNAL"},
		{"https://generativelanguage.googleapis.com/v1beta/models/m:generateContent", chaos.QuotaExhausted(), 429, "", "error.details.0.violations.0.quotaId", "GenerateRequestsPerDayPerProjectPerModel-FreeTier"},
	} {
		srv := &server{}
		resp, sent := post(t, chaos.Transport(srv, tc.fault.First(1)), tc.url)
		if len(srv.got) != 0 || !sent.closed.Load() {
			t.Errorf("%s %s: the request reached the server, or its body was left open", tc.url, tc.fault.Name())
		}
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.url, tc.fault.Name(), resp.StatusCode, tc.status)
		}
		if name, value, ok := strings.Cut(tc.header, "="); ok && resp.Header.Get(name) != value {
			t.Errorf("%s %s: %s: %q, want %q", tc.url, tc.fault.Name(), name, resp.Header.Get(name), value)
		}
		var doc any
		if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
			t.Fatalf("%s %s: body: %v", tc.url, tc.fault.Name(), err)
		}
		if got := at(doc, tc.path); got != tc.value {
			t.Errorf("%s %s: %s = %v, want %v", tc.url, tc.fault.Name(), tc.path, got, tc.value)
		}
	}
}

// at follows a dotted path of keys and indexes in a decoded JSON value.
func at(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			var i int
			if _, err := fmt.Sscan(k, &i); err != nil || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// events is a stream of five events, in the line endings and with the
// comments servers send.
var events = []string{
	"event: one\ndata: {\"n\":1}\n\n",
	": keep-alive\n\n",
	"data: {\"n\":2}\r\n\r\n",
	"data: {\"n\":3}\n\n",
	"data: {\"n\":4}\n\n",
	"data: [DONE]\n\n",
}

// A stream fault passes the stream's first events byte for byte, comments
// not counted, then breaks it, or ends it with the provider's error event.
func TestTransportCutsStreamsAfterTheirFirstEvents(t *testing.T) {
	for _, tc := range []struct {
		url   string
		fault chaos.Fault
		tail  string
		err   error
	}{
		{"https://api.openai.com/v1/chat/completions", chaos.StreamBroken(2), "", io.ErrUnexpectedEOF},
		{"https://api.openai.com/v1/chat/completions", chaos.StreamError(2), `data: {"error":{"code":null,"message":"The server had an error while processing your request. Sorry about that!","param":null,"type":"server_error"}}` + "\n\n", nil},
		{"https://api.openai.com/v1/responses", chaos.StreamError(2), `event: error` + "\n" + `data: {"code":"server_error","message":"The server had an error while processing your request. Sorry about that!","param":null,"sequence_number":2,"type":"error"}` + "\n\n", nil},
		{"https://api.anthropic.com/v1/messages", chaos.StreamError(2), `event: error` + "\n" + `data: {"error":{"message":"Overloaded","type":"overloaded_error"},"type":"error"}` + "\n\n", nil},
		{"https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent", chaos.StreamError(2), `data: {"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}` + "\n\n", nil},
	} {
		srv := &server{events: events}
		resp, _ := post(t, chaos.Transport(srv, tc.fault.First(1)), tc.url)
		got, err := io.ReadAll(resp.Body)
		if want := strings.Join(events[:3], "") + tc.tail; string(got) != want || !errors.Is(err, tc.err) {
			t.Errorf("%s %s: read %q, %v; want %q, %v", tc.url, tc.fault.Name(), got, err, want, tc.err)
		}
		if err := resp.Body.Close(); err != nil || !srv.bodies[0].closed.Load() {
			t.Errorf("%s %s: the server's body was left open", tc.url, tc.fault.Name())
		}
	}
}

// A stalled stream passes its first events, then holds the connection
// and says nothing until the request's context ends, or the body is
// closed.
func TestTransportStallsStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &server{events: events}
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://api.openai.com/v1/chat/completions", nil)
		resp, err := chaos.Transport(srv, chaos.StreamStalled(1).First(1)).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got, err := io.ReadAll(resp.Body)
		if string(got) != events[0] || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 30*time.Second {
			t.Errorf("read %q, %v after %v; want the first event, then nothing until the deadline 30s later", got, err, time.Since(start))
		}
		resp.Body.Close()

		resp, err = chaos.Transport(srv, chaos.StreamStalled(0).First(1)).RoundTrip(req.Clone(t.Context()))
		if err != nil {
			t.Fatal(err)
		}
		read := make(chan error)
		go func() {
			_, err := io.ReadAll(resp.Body)
			read <- err
		}()
		synctest.Wait()
		resp.Body.Close()
		if err := <-read; err == nil {
			t.Error("a stalled read ended without an error when the body was closed")
		}
	})
}

// Over a real connection, a consumer that gives up on a stalled stream
// leaves no goroutine (goleak, in TestMain) and no connection behind: the
// server sees the client go.
func TestTransportStalledStreamFreesItsConnection(t *testing.T) {
	left := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(left)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done() // a long answer: the server waits for more to say
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", nil)
	resp, err := (&http.Client{Transport: chaos.Transport(base, chaos.StreamStalled(1).First(1))}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "data: 0\n\n" || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("read %q, %v; want the first event, then the deadline", got, err)
	}
	select {
	case <-left:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the client go: the connection was kept")
	}
}

// Concurrent requests through one Transport are race-free (under -race)
// and every fault that fires is counted once: First(50) fires 50 times in
// 400 requests.
func TestTransportIsSafeForConcurrentUse(t *testing.T) {
	srv := &server{}
	rt := chaos.Transport(srv, chaos.ServerError().First(50), chaos.Overloaded().Rate(0.1, 3))
	var failed, ok atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://api.openai.com/v1/responses", nil)
				resp, err := rt.RoundTrip(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode == 500 {
					failed.Add(1)
				} else {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() != 50 {
		t.Errorf("First(50) fired %d times in 400 requests", failed.Load())
	}
}

// An injection is an event on the span of the request's context.
func TestTransportInjectionIsOnTheSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	ctx, span := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("test").Start(t.Context(), "attempt")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://api.openai.com/v1/responses", nil)
	resp, err := chaos.Transport(&server{}, chaos.QuotaExhausted().First(1)).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	span.End()
	evs := rec.Ended()[0].Events()
	if len(evs) != 1 || evs[0].Name != "chaos.injected" || evs[0].Attributes[0].Value.String() != "quota_exhausted" {
		t.Errorf("span events %+v, want one chaos.injected of quota_exhausted", evs)
	}
}

// A bad fault fails every request with an error naming it.
func TestTransportBadFault(t *testing.T) {
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://api.openai.com/v1/models", nil)
	_, err := chaos.Transport(&server{}, chaos.Latency(-time.Second).First(1)).RoundTrip(req)
	if err == nil || !strings.Contains(err.Error(), "Latency(-1s)") {
		t.Errorf("RoundTrip() = %v, want an error naming Latency(-1s)", err)
	}
}

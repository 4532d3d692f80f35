package openai_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// backgroundServer is a local Responses API over real TCP that makes each
// response in background mode: a create answers "queued", and the polls
// answer as poll says, by the response's id and the poll's number for it.
type backgroundServer struct {
	*httptest.Server
	mu      sync.Mutex
	creates int
	polls   map[string]int
	cancels []string
	bodies  []string // the creates' request bodies
	poll    func(w http.ResponseWriter, id string, n int)
}

func newBackgroundServer(t *testing.T, poll func(w http.ResponseWriter, id string, n int)) *backgroundServer {
	t.Helper()
	s := &backgroundServer{polls: map[string]int{}, poll: poll}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *backgroundServer) serve(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	path := strings.TrimPrefix(req.URL.Path, "/v1/responses")
	switch {
	case req.Method == http.MethodPost && path == "":
		body, _ := io.ReadAll(req.Body)
		s.creates++
		s.bodies = append(s.bodies, string(body))
		id := fmt.Sprint("resp_bg", s.creates)
		s.mu.Unlock()
		writeResponse(w, id, "queued", "")
	case req.Method == http.MethodPost && strings.HasSuffix(path, "/cancel"):
		id := strings.TrimSuffix(strings.TrimPrefix(path, "/"), "/cancel")
		s.cancels = append(s.cancels, id)
		s.mu.Unlock()
		writeResponse(w, id, "cancelled", "")
	case req.Method == http.MethodGet:
		id := strings.TrimPrefix(path, "/")
		s.polls[id]++
		n := s.polls[id]
		s.mu.Unlock()
		s.poll(w, id, n)
	default:
		s.mu.Unlock()
		http.Error(w, "unexpected request", http.StatusTeapot)
	}
}

// counts returns the creates, the polls in all, and the cancelled ids.
func (s *backgroundServer) counts() (creates, polls int, cancels []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.polls {
		polls += n
	}
	return s.creates, polls, append([]string(nil), s.cancels...)
}

// writeResponse writes a response object of status; a completed one
// answers text.
func writeResponse(w http.ResponseWriter, id, status, text string) {
	output := "[]"
	if text != "" {
		output = `[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"` + text + `","annotations":[]}]}]`
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":%q,"object":"response","created_at":1,"status":%q,"model":"gpt-test","output":%s,"parallel_tool_calls":true,"tool_choice":"auto","tools":[],"usage":{"input_tokens":5,"output_tokens":1,"total_tokens":6,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}}}`,
		id, status, output)
}

// reset ends the connection a request came on with a TCP reset, as a
// dropped connection does: no status, no byte.
func reset(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// backgroundResponses returns a Responses with resumable streams over s,
// each request on a connection of its own (a reused one that is reset,
// the transport would retry by itself), polling every 5 ms.
func backgroundResponses(t *testing.T, s *backgroundServer) *openai.Responses {
	t.Cleanup(openai.SetPolls(5*time.Millisecond, 5*time.Millisecond))
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	return openai.NewResponses(model, option.WithAPIKey("test-key"), option.WithBaseURL(s.URL+"/v1/"),
		option.WithHTTPClient(client), openai.WithResumableStreams())
}

// throughRetry wraps r in a RetryRunnable of cfg recording its spans in
// rec.
func throughRetry(t *testing.T, r *openai.Responses, cfg retry.RetryConfig, rec *tracetest.SpanRecorder) *retry.RetryRunnable {
	t.Helper()
	rr, err := retry.New(r, cfg, retry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
		retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

var quickRetries = retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}

// The response completes on the provider, and the connection of the poll
// that would have read it is reset: the retry layer's next attempt polls
// the same response and answers with it. One create, no second one.
func TestBackgroundInvokePollsAfterADroppedConnection(t *testing.T) {
	s := newBackgroundServer(t, func(w http.ResponseWriter, id string, n int) {
		switch n {
		case 1:
			writeResponse(w, id, "in_progress", "")
		case 2:
			reset(w) // the response is done by now; its reader is cut off
		default:
			writeResponse(w, id, "completed", "Hello")
		}
	})
	rec := tracetest.NewSpanRecorder()
	out, err := throughRetry(t, backgroundResponses(t, s), quickRetries, rec).Invoke(t.Context(), "Say hello")
	if err != nil {
		t.Fatalf("Invoke() error = %v", err)
	}
	if got := out.(*responses.Response).OutputText(); got != "Hello" {
		t.Errorf("answer %q, want Hello", got)
	}
	creates, polls, cancels := s.counts()
	if creates != 1 || polls != 3 || len(cancels) != 0 {
		t.Errorf("%d creates, %d polls, cancelled %v; want 1 create, 3 polls (the second reset), none cancelled", creates, polls, cancels)
	}
	if !strings.Contains(s.bodies[0], `"background":true`) || !strings.Contains(s.bodies[0], `"store":true`) {
		t.Errorf("create body %s, want background and store", s.bodies[0])
	}
	attempts := 0
	for _, sp := range rec.Ended() {
		if sp.Name() == "retry.attempt" {
			attempts++
		}
	}
	if attempts != 2 {
		t.Errorf("%d attempts, want 2: the reset, then the poll that read the answer", attempts)
	}
}

// A call whose context ends while it polls cancels the response on the
// provider, which would otherwise run to its end and be billed.
func TestBackgroundInvokeCancelsWhenTheCallEnds(t *testing.T) {
	polled := make(chan struct{}, 1)
	s := newBackgroundServer(t, func(w http.ResponseWriter, id string, _ int) {
		writeResponse(w, id, "in_progress", "")
		select {
		case polled <- struct{}{}:
		default:
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-polled
		cancel()
	}()
	_, err := throughRetry(t, backgroundResponses(t, s), quickRetries, tracetest.NewSpanRecorder()).Invoke(ctx, "Say hello")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Invoke() error = %v, want the cancellation", err)
	}
	creates, _, cancels := s.counts()
	if creates != 1 || len(cancels) != 1 || cancels[0] != "resp_bg1" {
		t.Errorf("%d creates, cancelled %v; want 1 create and resp_bg1 cancelled", creates, cancels)
	}
}

// An attempt's own timeout is not the call's end: the response is not
// cancelled, and the next attempt polls it.
func TestBackgroundInvokeOutlivesAnAttemptTimeout(t *testing.T) {
	s := newBackgroundServer(t, func(w http.ResponseWriter, id string, n int) {
		if n <= 3 {
			time.Sleep(30 * time.Millisecond) // a slow poll: the attempt times out on it
			writeResponse(w, id, "in_progress", "")
			return
		}
		writeResponse(w, id, "completed", "Hello")
	})
	cfg := quickRetries
	cfg.PerAttemptTimeout = 20 * time.Millisecond
	cfg.MaxRetries = 10
	out, err := throughRetry(t, backgroundResponses(t, s), cfg, tracetest.NewSpanRecorder()).Invoke(t.Context(), "Say hello")
	if err != nil {
		t.Fatalf("Invoke() error = %v", err)
	}
	creates, _, cancels := s.counts()
	if out.(*responses.Response).OutputText() != "Hello" || creates != 1 || len(cancels) != 0 {
		t.Errorf("%d creates, cancelled %v; want the answer of 1 create, none cancelled", creates, cancels)
	}
}

// A provider that no longer knows the response (404 on a poll) gets it
// created once more, and the attempt's span says so.
func TestBackgroundInvokeCreatesAgainWhenTheIDIsForgotten(t *testing.T) {
	s := newBackgroundServer(t, func(w http.ResponseWriter, id string, _ int) {
		if id == "resp_bg1" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"message":"Response with id 'resp_bg1' not found.","type":"invalid_request_error","param":null,"code":null}}`)
			return
		}
		writeResponse(w, id, "completed", "Hello")
	})
	rec := tracetest.NewSpanRecorder()
	out, err := throughRetry(t, backgroundResponses(t, s), quickRetries, rec).Invoke(t.Context(), "Say hello")
	if err != nil {
		t.Fatalf("Invoke() error = %v", err)
	}
	creates, _, _ := s.counts()
	if out.(*responses.Response).OutputText() != "Hello" || creates != 2 {
		t.Errorf("%d creates, want the answer of the second", creates)
	}
	var said bool
	for _, sp := range rec.Ended() {
		for _, ev := range sp.Events() {
			said = said || ev.Name == "openai.responses.recreated"
		}
	}
	if !said {
		t.Error("no span event openai.responses.recreated")
	}
}

// Without a retry layer a background Invoke polls to the end as well.
func TestBackgroundInvokeAlone(t *testing.T) {
	s := newBackgroundServer(t, func(w http.ResponseWriter, id string, n int) {
		if n < 3 {
			writeResponse(w, id, "in_progress", "")
			return
		}
		writeResponse(w, id, "completed", "Hello")
	})
	out, err := backgroundResponses(t, s).Invoke(t.Context(), "Say hello")
	creates, polls, _ := s.counts()
	if err != nil || out.(*responses.Response).OutputText() != "Hello" || creates != 1 || polls != 3 {
		t.Errorf("Invoke() = %v after %d creates and %d polls, want Hello after 1 and 3", err, creates, polls)
	}
}

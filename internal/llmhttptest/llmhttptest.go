// Package llmhttptest is a scripted, in-memory HTTP server for the provider
// adapters' tests: the real SDK clients send their requests to it through
// an http.RoundTripper, so no socket is opened and tests can run under
// testing/synctest's fake clock.
package llmhttptest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Reply is one scripted HTTP response.
type Reply struct {
	Status int
	Header map[string]string
	Body   string
	// BreakAfter, when set, makes reading the body fail with it once Body
	// has been read: a connection that dies mid-stream.
	BreakAfter error
	// Stall, when positive, makes the body send nothing more for that
	// long once Body has been read (or until the request ends), and then
	// close the connection: a stream that stalls mid-answer.
	Stall time.Duration
}

// JSON returns a reply with a JSON body.
func JSON(status int, body string, header ...string) Reply {
	h := map[string]string{"Content-Type": "application/json"}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	return Reply{Status: status, Header: h, Body: body}
}

// SSE returns a 200 reply streaming events, each a "data:" payload, or a
// full event block when it starts with "event:".
func SSE(events ...string) Reply {
	var b strings.Builder
	for _, e := range events {
		if !strings.HasPrefix(e, "event:") {
			e = "data: " + e
		}
		b.WriteString(e + "\n\n")
	}
	return Reply{Status: 200, Header: map[string]string{"Content-Type": "text/event-stream"}, Body: b.String()}
}

// Server answers each request with the next Reply of its script; once the
// script is used up it answers 500. It is safe for concurrent use.
type Server struct {
	mu       sync.Mutex
	script   []Reply
	requests []*http.Request
	bodies   []string
	// answer, for a Server made by NewFunc, makes each reply; the
	// requests are then counted, not kept.
	answer func(req *http.Request, body string) Reply
	count  int
}

// NewFunc returns a Server whose replies answer makes from each request
// and its body, for tests that make many requests at once: the Server
// counts them (Requests) but keeps none (URLs and Bodies are empty).
func NewFunc(answer func(req *http.Request, body string) Reply) *Server {
	return &Server{answer: answer}
}

// Bodies returns the bodies of the requests received, in order.
func (s *Server) Bodies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// New returns a Server with the given script.
func New(script ...Reply) *Server { return &Server{script: script} }

// Client returns an HTTP client whose requests the Server answers.
func (s *Server) Client() *http.Client { return &http.Client{Transport: s} }

// URLs returns the URLs of the requests received, in order.
func (s *Server) URLs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	urls := make([]string, len(s.requests))
	for i, r := range s.requests {
		urls[i] = r.URL.String()
	}
	return urls
}

// Requests returns how many requests the Server received.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests) + s.count
}

// RoundTrip answers req with the next Reply.
func (s *Server) RoundTrip(req *http.Request) (*http.Response, error) {
	var body strings.Builder
	if req.Body != nil {
		_, _ = io.Copy(&body, req.Body)
		_ = req.Body.Close()
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	var r Reply
	if s.answer != nil {
		s.mu.Lock()
		s.count++
		s.mu.Unlock()
		r = s.answer(req, body.String())
	} else {
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.bodies = append(s.bodies, body.String())
		r = Reply{Status: 500, Body: `{"error":{"message":"script exhausted","type":"server_error"}}`}
		if len(s.script) > 0 {
			r, s.script = s.script[0], s.script[1:]
		}
		s.mu.Unlock()
	}

	h := http.Header{}
	for k, v := range r.Header {
		h.Set(k, v)
	}
	var reply io.Reader = strings.NewReader(r.Body)
	if r.BreakAfter != nil {
		reply = io.MultiReader(reply, errReader{r.BreakAfter})
	}
	if r.Stall > 0 {
		reply = io.MultiReader(reply, stall{req.Context(), r.Stall})
	}
	return &http.Response{
		Status:     fmt.Sprintf("%d %s", r.Status, http.StatusText(r.Status)),
		StatusCode: r.Status,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  h,
		Body:    io.NopCloser(reply),
		Request: req,
	}, nil
}

// stall is a body that yields nothing for d, or until its request ends,
// and then reads as a connection closed mid-answer.
type stall struct {
	ctx context.Context
	d   time.Duration
}

func (s stall) Read([]byte) (int, error) {
	t := time.NewTimer(s.d)
	defer t.Stop()
	select {
	case <-t.C:
		return 0, io.ErrUnexpectedEOF
	case <-s.ctx.Done():
		return 0, s.ctx.Err()
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

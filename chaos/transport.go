package chaos

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/steadfast-go/steadfast/internal/room"
)

// transport injects faults into the requests it carries.
type transport struct {
	base   http.RoundTripper
	faults []*armed
	stream bool  // some fault is a stream's
	err    error // a bad argument: every request fails with it
}

// Transport returns an http.RoundTripper that injects faults into the
// requests it carries to base (http.DefaultTransport when nil), in the
// wire format of the request's provider (Fault.As says otherwise): a
// status, headers and a JSON error body, a delay, a request that hangs,
// or a server-sent event stream cut, stalled, or ended by an error event
// after its first events. Give it to the SDK's client, so that the real
// SDK and adapter read the faults:
//
//	client := &http.Client{Transport: chaos.Transport(nil, chaos.Overloaded().Rate(0.2, 1))}
//	llm := openai.NewResponses("gpt-4.1-mini", option.WithHTTPClient(client))
//
// For each request, the faults are asked in order whether they fire, and
// the first that does is injected; a stream fault is asked when a
// response to the request is a stream (Content-Type text/event-stream),
// and its events are counted as the server sent them. A request no fault
// fires for goes to base untouched, and its response comes back as base
// gave it. A bad fault makes every request fail with an error naming it.
func Transport(base http.RoundTripper, faults ...Fault) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	t := &transport{base: base}
	t.faults, t.err = arm(faults)
	for _, f := range t.faults {
		t.stream = t.stream || f.kind.inStream()
	}
	return t
}

// RoundTrip injects the first fault that fires, or carries req to base.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.err != nil {
		closeBody(req)
		return nil, t.err
	}
	ctx := req.Context()
	for _, f := range t.faults {
		if f.kind.inStream() || !f.fires(ctx) {
			continue
		}
		injected(ctx, &f.Fault)
		switch f.kind {
		case latency:
			if err := room.Sleep(ctx, f.wait); err != nil {
				closeBody(req)
				return nil, err
			}
			return t.base.RoundTrip(req)
		case hang:
			closeBody(req)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		closeBody(req)
		return respond(req, f.answerOf(f.providerFor(req))), nil
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || !t.stream || !isEventStream(resp) {
		return resp, err
	}
	for _, f := range t.faults {
		if f.kind.inStream() && f.fires(ctx) {
			injected(ctx, &f.Fault)
			resp.Body = newEventCutter(req, resp.Body, &f.Fault)
			resp.ContentLength = -1
			break
		}
	}
	return resp, nil
}

// providerFor is the provider whose format f answers req in.
func (f *Fault) providerFor(req *http.Request) Provider {
	if f.provider != "" {
		return f.provider
	}
	return providerOf(req)
}

// respond is the response a provider gives with a.
func respond(req *http.Request, a answer) *http.Response {
	h := make(http.Header, len(a.header)/2)
	for i := 0; i+1 < len(a.header); i += 2 {
		h.Add(a.header[i], a.header[i+1])
	}
	return &http.Response{
		Status:        strconv.Itoa(a.status) + " " + http.StatusText(a.status),
		StatusCode:    a.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(strings.NewReader(a.body)),
		ContentLength: int64(len(a.body)),
		Request:       req,
	}
}

// isEventStream reports a response that is a server-sent event stream.
func isEventStream(resp *http.Response) bool {
	return strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
}

// closeBody closes the body of a request the transport does not carry,
// as a RoundTripper must.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

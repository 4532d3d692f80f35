package chaos

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
)

// eventCutter is the body of a server-sent event stream that a stream
// fault acts on: it passes the stream's first events as the server sent
// them, byte for byte, then breaks, stalls or ends it with an error event.
// It starts no goroutine: a stalled read waits on the request's context
// or for Close.
type eventCutter struct {
	ctx  context.Context
	body io.ReadCloser
	f    *Fault

	left  int  // events still to pass
	line  int  // bytes of the line being read, CR excluded
	field bool // the event being read has a line that is not a comment
	cut   bool // the events before the fault are passed
	tail  []byte

	closed    chan struct{} // closed by Close
	closeOnce sync.Once
	bodyOnce  sync.Once
	bodyErr   error
}

func newEventCutter(req *http.Request, body io.ReadCloser, f *Fault) *eventCutter {
	c := &eventCutter{ctx: req.Context(), body: body, f: f, left: f.after, cut: f.after == 0, closed: make(chan struct{})}
	if f.kind == streamError {
		event, _ := inBandEvent(f.providerFor(req), req.URL.Path, f.after)
		c.tail = []byte(event)
	}
	if c.cut && f.kind == streamBroken {
		c.closeBody() // the connection is gone before any event
	}
	return c
}

// errClosed is what a read of a closed stalled stream returns.
var errClosed = errors.New("chaos: read on a closed stream body")

func (c *eventCutter) Read(p []byte) (int, error) {
	if !c.cut {
		return c.pass(p)
	}
	switch c.f.kind {
	case streamBroken:
		return 0, io.ErrUnexpectedEOF
	case streamError:
		if len(c.tail) == 0 {
			return 0, io.EOF
		}
		n := copy(p, c.tail)
		c.tail = c.tail[n:]
		return n, nil
	}
	select { // stalled: the connection is held, and says nothing
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	case <-c.closed:
		return 0, errClosed
	}
}

// pass reads from the body and passes what it read up to the end of the
// last event before the fault; the rest is never delivered.
func (c *eventCutter) pass(p []byte) (int, error) {
	n, err := c.body.Read(p)
	for i, b := range p[:n] {
		switch b {
		case '\r':
		case '\n':
			if c.line > 0 {
				c.line = 0
				continue
			}
			if !c.field {
				continue
			}
			c.field = false
			if c.left--; c.left == 0 {
				c.cut = true
				if c.f.kind != streamStalled {
					c.closeBody() // the server is done with, or gone from, this stream
				}
				return i + 1, nil
			}
		default:
			if c.line == 0 && b != ':' {
				c.field = true
			}
			c.line++
		}
	}
	return n, err
}

// Close closes the stream's body, and ends a stalled read.
func (c *eventCutter) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.closeBody()
}

// closeBody closes the body once, and returns that close's error.
func (c *eventCutter) closeBody() error {
	c.bodyOnce.Do(func() { c.bodyErr = c.body.Close() })
	return c.bodyErr
}

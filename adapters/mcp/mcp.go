// Package mcp makes the tools of a Model Context Protocol server Runnables
// that a retry layer can wrap safely, over the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// A tool call fails in ways that must be told apart:
//   - a result with IsError is the tool's answer for the model, not a
//     failure: it is returned as the output (WithErrorResults makes it an
//     error for those who want it retried);
//   - a JSON-RPC parse error, invalid request, method not found or invalid
//     params fails the same way every time: permanent;
//   - an internal error and a broken transport are retryable; a closed or
//     missing session is replaced through WithReconnect before the retry,
//     one reconnect shared by every caller that saw it close;
//   - a tool with side effects must not run twice: it is Idempotent only
//     when annotations that you trust (WithTrustAnnotations) say it is
//     read-only or idempotent, or when WithIdempotent says so. Each call
//     carries the retry layer's InvocationID in its _meta, so a server can
//     deduplicate a call retried with RetryNonIdempotent.
//
// Invoke takes the arguments (a map, a struct, or JSON bytes) and returns
// the SDK's *mcpsdk.CallToolResult; Batch makes concurrent calls; Stream
// yields the one result. The call span carries gen_ai.tool.name and the
// attempt span gen_ai.tool.call.id (the InvocationID), never the arguments
// or the result.
package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// DefaultMetaKey is the _meta key of the InvocationID a call carries.
const DefaultMetaKey = "io.github.steadfast-go/invocation-id"

// Option configures the Runnables of FromTool and Tools. Nil options are
// ignored.
type Option func(*config)

type config struct {
	trust        bool
	reconnect    func(context.Context) (*mcpsdk.ClientSession, error)
	idempotent   map[string]bool
	metaKey      string
	errorResults bool
}

// WithTrustAnnotations lets the tools' annotations (readOnlyHint,
// idempotentHint) decide which tools are Idempotent, and so retried. The
// SDK warns that annotations from an untrusted server must not drive
// decisions: without this option they are ignored.
func WithTrustAnnotations() Option { return func(c *config) { c.trust = true } }

// WithReconnect sets how a closed or missing session is replaced: when a
// call finds the session gone, reconnect is called once (however many
// callers saw it go) and the call fails with a retryable error, so that the
// retry layer's next attempt goes through the new session.
func WithReconnect(reconnect func(ctx context.Context) (*mcpsdk.ClientSession, error)) Option {
	return func(c *config) {
		if reconnect != nil {
			c.reconnect = reconnect
		}
	}
}

// WithIdempotent says whether the named tool may be repeated, whatever its
// annotations, for users who know the server.
func WithIdempotent(tool string, idempotent bool) Option {
	return func(c *config) {
		if c.idempotent == nil {
			c.idempotent = map[string]bool{}
		}
		c.idempotent[tool] = idempotent
	}
}

// WithMetaKey sets the _meta key under which each call carries its
// InvocationID; the default is DefaultMetaKey.
func WithMetaKey(key string) Option {
	return func(c *config) {
		if key != "" {
			c.metaKey = key
		}
	}
}

// WithErrorResults makes a result with IsError an error (a *ToolError,
// retryable, carrying the result) instead of an output.
func WithErrorResults() Option { return func(c *config) { c.errorResults = true } }

func newConfig(opts []Option) config {
	c := config{metaKey: DefaultMetaKey}
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	return c
}

// FromTool returns tool, on session, as a core.Runnable: Invoke calls it
// with the input as its arguments (a map, a struct, or JSON bytes) and
// returns the *mcpsdk.CallToolResult; Batch makes concurrent calls; Stream
// yields the one result.
func FromTool(session *mcpsdk.ClientSession, tool *mcpsdk.Tool, opts ...Option) (core.Runnable, error) {
	if session == nil {
		return nil, errors.New("mcp: FromTool: session is nil")
	}
	if tool == nil || tool.Name == "" {
		return nil, errors.New("mcp: FromTool: tool is nil or has no name")
	}
	c := newConfig(opts)
	return newTool(&conn{session: session, reconnect: c.reconnect}, tool, c), nil
}

// Tools lists the tools of session and returns each as FromTool does; they
// share one connection, so a session that closes is reconnected once.
func Tools(ctx context.Context, session *mcpsdk.ClientSession, opts ...Option) ([]core.Runnable, error) {
	if session == nil {
		return nil, errors.New("mcp: Tools: session is nil")
	}
	c := newConfig(opts)
	cn := &conn{session: session, reconnect: c.reconnect}
	var out []core.Runnable
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcp: Tools: listing the tools: %w", err)
		}
		out = append(out, newTool(cn, tool, c))
	}
	return out, nil
}

// tool is one MCP tool as a Runnable.
type tool struct {
	conn  *conn
	tool  *mcpsdk.Tool
	cfg   config
	idem  bool
	attrs []attribute.KeyValue
}

func newTool(cn *conn, t *mcpsdk.Tool, c config) *tool {
	idem := false
	if a := t.Annotations; c.trust && a != nil {
		idem = a.ReadOnlyHint || a.IdempotentHint
	}
	if v, ok := c.idempotent[t.Name]; ok {
		idem = v
	}
	return &tool{conn: cn, tool: t, cfg: c, idem: idem, attrs: []attribute.KeyValue{
		semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(t.Name),
	}}
}

// Name returns the tool's name.
func (t *tool) Name() string { return t.tool.Name }

// Idempotent reports whether the tool may be called again: see the package
// doc.
func (t *tool) Idempotent() bool { return t.idem }

// CallAttributes returns the GenAI attributes of a tool execution: never
// its arguments or its result.
func (t *tool) CallAttributes() []attribute.KeyValue { return t.attrs }

// Invoke calls the tool once.
func (t *tool) Invoke(ctx context.Context, input any, _ ...core.Option) (any, error) {
	args, err := arguments(input)
	if err != nil {
		return nil, retry.Permanent(fmt.Errorf("mcp: tool %s: %w", t.tool.Name, err))
	}
	params := &mcpsdk.CallToolParams{Name: t.tool.Name, Arguments: args}
	if info, ok := retry.AttemptFromContext(ctx); ok {
		params.Meta = mcpsdk.Meta{t.cfg.metaKey: info.InvocationID}
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			span.SetAttributes(semconv.GenAIToolCallID(info.InvocationID))
		}
	}
	session, gen := t.conn.get()
	res, err := session.CallTool(ctx, params)
	if err != nil {
		return nil, t.adapt(ctx, gen, err)
	}
	if res.IsError && t.cfg.errorResults {
		return res, &ToolError{Tool: t.tool.Name, Result: res}
	}
	return res, nil
}

// Batch calls the tool once per input, concurrently.
func (t *tool) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(t.Invoke).Batch(ctx, inputs, opts...)
}

// Stream yields the one result, or the call's error.
func (t *tool) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(t.Invoke).Stream(ctx, input, opts...)
}

// arguments returns the tool's arguments from an input: JSON bytes as they
// are, anything else to be marshaled by the SDK.
func arguments(input any) (any, error) {
	switch in := input.(type) {
	case nil:
		return map[string]any{}, nil
	case []byte:
		if !json.Valid(in) {
			return nil, errors.New("the arguments are not valid JSON")
		}
		return json.RawMessage(in), nil
	case json.RawMessage:
		if !json.Valid(in) {
			return nil, errors.New("the arguments are not valid JSON")
		}
		return in, nil
	}
	return input, nil
}

// conn is the session the tools of one server share, and its replacement
// when it closes: one reconnect for every caller that saw the same session
// close. Its lock is never held across the network: callers that come
// while a reconnect is under way wait for it, or for their own context.
type conn struct {
	mu        sync.Mutex
	session   *mcpsdk.ClientSession
	gen       int           // the session's generation, one more for each reconnect
	pending   *reconnecting // the reconnect under way, if any
	reconnect func(context.Context) (*mcpsdk.ClientSession, error)
}

// reconnecting is a reconnect under way; done is closed when it ends.
type reconnecting struct {
	done chan struct{}
	err  error
	// abandoned is set when it failed because the caller that ran it
	// gave up: a caller still waiting runs one of its own.
	abandoned bool
}

func (c *conn) get() (*mcpsdk.ClientSession, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session, c.gen
}

// replace replaces session generation gen, unless another caller already
// has. A caller that comes while a reconnect is under way shares it, and
// returns at once with its own error when its context ends first.
func (c *conn) replace(ctx context.Context, gen int) error {
	for {
		c.mu.Lock()
		if c.gen != gen {
			c.mu.Unlock()
			return nil // replaced already
		}
		if p := c.pending; p != nil {
			c.mu.Unlock()
			select {
			case <-p.done:
				if p.err != nil && !p.abandoned {
					return p.err
				}
				continue // replaced, or the caller that ran it gave up: look again
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		p := &reconnecting{done: make(chan struct{})}
		c.pending = p
		c.mu.Unlock()
		return c.run(ctx, p)
	}
}

// run makes reconnect p on the caller's goroutine, with no lock held, and
// installs the new session.
func (c *conn) run(ctx context.Context, p *reconnecting) (err error) {
	var s *mcpsdk.ClientSession
	defer func() { // also when reconnect panics: the waiters must not wait for ever
		var old *mcpsdk.ClientSession
		c.mu.Lock()
		c.pending = nil
		if err == nil && s != nil {
			old, c.session, c.gen = c.session, s, c.gen+1
		} else {
			p.err = cmp.Or(err, errReconnectPanicked)
			p.abandoned = ctx.Err() != nil || err == nil
		}
		close(p.done)
		c.mu.Unlock()
		if old != nil {
			_ = old.Close() // the old one is gone; closing it releases what it held
		}
	}()
	s, err = c.reconnect(ctx)
	if err == nil && s == nil {
		err = errors.New("the reconnect function returned no session")
	}
	return err
}

// errReconnectPanicked is what the callers waiting on a reconnect that
// panicked see: they run one of their own.
var errReconnectPanicked = errors.New("the reconnect function panicked")

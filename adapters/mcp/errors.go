package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolError is a result with IsError made an error by WithErrorResults:
// the tool's own failure, reported to the model in Result. It is
// retryable.
type ToolError struct {
	Tool   string
	Result *mcpsdk.CallToolResult
}

// Error names the tool; the result's content, which may quote the call's
// arguments, is not in it.
func (e *ToolError) Error() string { return "mcp: tool " + e.Tool + " reported an error" }

// Retryable reports true: the user asked for such results to be retried.
func (e *ToolError) Retryable() bool { return true }

// ErrorType names the failure for telemetry.
func (e *ToolError) ErrorType() string { return "tool_error" }

// Error is a failed call's error as the retry layer reads it: a JSON-RPC
// error's code decides (Code is 0 for a transport's failure), and Err, the
// SDK's error, stays reachable with errors.As.
type Error struct {
	Tool string
	Code int64 // the JSON-RPC error code; 0 when the call failed below it
	Err  error
}

// Error names the tool, the SDK's error and, for a JSON-RPC error, its
// code.
func (e *Error) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("mcp: tool %s: %v (JSON-RPC %d)", e.Tool, e.Err, e.Code)
	}
	return fmt.Sprintf("mcp: tool %s: %v", e.Tool, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports false for the JSON-RPC errors that fail the same way
// every time (parse error, invalid request, method not found, invalid
// params), true for the others and for a transport's failure.
func (e *Error) Retryable() bool {
	switch e.Code {
	case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeMethodNotFound, jsonrpc.CodeInvalidParams:
		return false
	}
	return true
}

// ErrorType names the failure for telemetry: "jsonrpc_<code>", or
// "session_closed" for a session that is gone.
func (e *Error) ErrorType() string {
	switch {
	case e.Code != 0:
		return fmt.Sprintf("jsonrpc_%d", e.Code)
	case sessionGone(e.Err):
		return "session_closed"
	}
	return ""
}

// sessionGone reports a closed connection (mcp.ErrConnectionClosed when
// sending on it; io.EOF when it closed under a call awaiting its reply) or
// a session the server no longer knows (mcp.ErrSessionMissing: HTTP 404 for
// a streamable session).
func sessionGone(err error) bool {
	return errors.Is(err, mcpsdk.ErrConnectionClosed) || errors.Is(err, mcpsdk.ErrSessionMissing) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// adapt returns a failed call's error as the retry layer should see it,
// replacing the session first when it is gone. The caller's own
// cancellation is returned as it is.
func (t *tool) adapt(ctx context.Context, gen int, err error) error {
	if ctx.Err() != nil {
		return err
	}
	e := &Error{Tool: t.tool.Name, Err: err}
	if we, ok := errors.AsType[*jsonrpc.Error](err); ok {
		e.Code = we.Code
	}
	if sessionGone(err) && t.conn.reconnect != nil {
		if rerr := t.conn.replace(ctx, gen); rerr != nil {
			return fmt.Errorf("%w; reconnecting failed: %w", e, rerr)
		}
	}
	return e
}

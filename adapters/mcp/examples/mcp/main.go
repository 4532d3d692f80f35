// Command mcp shows an agent's tools behind the Model Context Protocol,
// retried only when that is safe. An in-process MCP server offers a search
// tool, read-only, whose index fails now and then, and a create_ticket
// tool with a side effect, whose reply is lost once with its connection.
// The search is retried until it answers; the ticket is created exactly
// once: retried through a new session, it carries the call's InvocationID,
// and the server does not repeat it.
//
//	cd adapters/mcp && go run ./examples/mcp
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/steadfast-go/steadfast/adapters/mcp"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcp:", err)
		os.Exit(1)
	}
}

// toolServer is the MCP server: its tools, and the sessions it serves.
type toolServer struct {
	srv      *mcpsdk.Server
	searches atomic.Int32
	created  atomic.Int32
	lose     atomic.Bool // lose create_ticket's next reply
	mu       sync.Mutex
	tickets  map[string]bool // by the InvocationID in _meta
	closing  sync.WaitGroup
}

func newToolServer() *toolServer {
	s := &toolServer{srv: mcpsdk.NewServer(&mcpsdk.Implementation{Name: "helpdesk", Version: "1"}, nil), tickets: map[string]bool{}}
	object := json.RawMessage(`{"type":"object"}`)
	s.srv.AddTool(&mcpsdk.Tool{Name: "search", Description: "Search the knowledge base.", InputSchema: object,
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			if n := s.searches.Add(1); n%3 != 0 { // two calls in three find the index unavailable
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "index unavailable"}
			}
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "3 articles on retries"}}}, nil
		})
	s.srv.AddTool(&mcpsdk.Tool{Name: "create_ticket", Description: "Open a support ticket.", InputSchema: object},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			id, _ := req.Params.Meta[mcp.DefaultMetaKey].(string)
			s.mu.Lock()
			if !s.tickets[id] { // a retry of a call already made does not create another
				s.tickets[id] = true
				s.created.Add(1)
			}
			s.mu.Unlock()
			if s.lose.CompareAndSwap(true, false) {
				s.closing.Go(func() { req.Session.Close() }) // the connection drops before the reply
				time.Sleep(20 * time.Millisecond)
			}
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "ticket HD-1 created"}}}, nil
		})
	return s
}

// connect opens an in-memory session to the server.
func (s *toolServer) connect(ctx context.Context) (*mcpsdk.ClientSession, error) {
	ct, st := mcpsdk.NewInMemoryTransports()
	if _, err := s.srv.Connect(ctx, st, nil); err != nil {
		return nil, err
	}
	return mcpsdk.NewClient(&mcpsdk.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, ct, nil)
}

func run(w io.Writer) error {
	ctx := context.Background()
	s := newToolServer()
	var sessions []*mcpsdk.ClientSession
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
		for ss := range s.srv.Sessions() {
			ss.Close()
		}
		s.closing.Wait()
	}()
	dial := func(ctx context.Context) (*mcpsdk.ClientSession, error) {
		cs, err := s.connect(ctx)
		if err == nil {
			sessions = append(sessions, cs)
		}
		return cs, err
	}
	cs, err := dial(ctx)
	if err != nil {
		return err
	}
	// This server is ours: its annotations may say which tools are safe
	// to repeat.
	tools, err := mcp.Tools(ctx, cs, mcp.WithTrustAnnotations(), mcp.WithReconnect(dial))
	if err != nil {
		return err
	}
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second}
	for _, tool := range tools {
		name := core.NameOf(tool)
		tcfg := cfg
		if name == "create_ticket" {
			// Not idempotent: retried only because the server deduplicates
			// by the InvocationID each call carries in _meta.
			tcfg.RetryNonIdempotent = true
			s.lose.Store(true)
		}
		r, err := retry.New(tool, tcfg, retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) {
			fmt.Fprintf(w, "  %s: attempt %d failed: %v\n", name, ev.Attempt, ev.Err)
		}))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s (idempotent: %v)\n", name, core.IsIdempotent(tool))
		out, err := r.Invoke(ctx, map[string]any{"query": "retries"})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s\n", out.(*mcpsdk.CallToolResult).Content[0].(*mcpsdk.TextContent).Text)
	}
	fmt.Fprintf(w, "\nsearch called %d times; tickets created: %d\n", s.searches.Load(), s.created.Load())
	return nil
}

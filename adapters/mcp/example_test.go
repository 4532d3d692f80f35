package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/steadfast-go/steadfast/adapters/mcp"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// A tool of an MCP session as a Runnable, behind a retry layer.
func ExampleFromTool() {
	ctx := context.Background()
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "kb", Version: "1"}, nil)
	search := &mcpsdk.Tool{Name: "search", InputSchema: json.RawMessage(`{"type":"object"}`)}
	srv.AddTool(search, func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "found"}}}, nil
	})
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, _ := srv.Connect(ctx, st, nil)
	defer ss.Close()
	session, _ := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	defer session.Close()

	tool, _ := mcp.FromTool(session, search, mcp.WithIdempotent("search", true)) // we know it is read-only
	r := retry.NewRetryRunnable(tool, retry.DefaultRetryConfig())
	out, _ := r.Invoke(ctx, map[string]any{"query": "retries"})
	fmt.Println(core.NameOf(r), out.(*mcpsdk.CallToolResult).Content[0].(*mcpsdk.TextContent).Text)
	// Output: search found
}

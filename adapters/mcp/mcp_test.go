package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	mnoop "go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/adapters/mcp"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var object = json.RawMessage(`{"type":"object"}`)

// server is an MCP server of the test's own with four tools:
//   - search, annotated read-only, failing with an internal error while
//     searchFails is positive;
//   - report, answering with an IsError result;
//   - strict, rejecting its arguments (invalid params);
//   - create_ticket, with a side effect, deduplicated by the _meta
//     InvocationID; while loseReply is set, it drops the connection before
//     answering.
type server struct {
	srv         *mcpsdk.Server
	searchFails atomic.Int32
	searches    atomic.Int32
	effects     atomic.Int32
	loseReply   atomic.Bool
	mu          sync.Mutex
	tickets     map[string]bool
	sessions    []*mcpsdk.ServerSession
	closing     sync.WaitGroup // sessions a handler closes
}

func newServer() *server {
	s := &server{srv: mcpsdk.NewServer(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil), tickets: map[string]bool{}}
	s.srv.AddTool(&mcpsdk.Tool{Name: "search", InputSchema: object, Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			s.searches.Add(1)
			if s.searchFails.Add(-1) >= 0 {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "index unavailable"}
			}
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "found"}}}, nil
		})
	s.srv.AddTool(&mcpsdk.Tool{Name: "report", InputSchema: object},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "no such report"}}}, nil
		})
	s.srv.AddTool(&mcpsdk.Tool{Name: "strict", InputSchema: object},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "missing title"}
		})
	s.srv.AddTool(&mcpsdk.Tool{Name: "create_ticket", InputSchema: object},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			id, _ := req.Params.Meta[mcp.DefaultMetaKey].(string)
			s.mu.Lock()
			if id == "" || !s.tickets[id] {
				s.tickets[id] = true
				s.effects.Add(1)
			}
			s.mu.Unlock()
			if s.loseReply.CompareAndSwap(true, false) {
				// The connection drops before the reply: Close waits for
				// this handler, so it runs beside it, which its end lets
				// return.
				s.closing.Go(func() { req.Session.Close() })
				time.Sleep(20 * time.Millisecond) // the connection closes meanwhile
			}
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "ticket created"}}}, nil
		})
	return s
}

// connect opens an in-memory session to s.
func (s *server) connect(ctx context.Context) (*mcpsdk.ClientSession, error) {
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := s.srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.sessions = append(s.sessions, ss)
	s.mu.Unlock()
	return mcpsdk.NewClient(&mcpsdk.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, ct, nil)
}

// dropSessions closes every server-side session: the clients' sessions are
// gone.
func (s *server) dropSessions() {
	s.mu.Lock()
	sessions := s.sessions
	s.sessions = nil
	s.mu.Unlock()
	for _, ss := range sessions {
		ss.Close()
	}
	s.closing.Wait()
}

// setup connects to a new server and returns its tools by name; the test
// ends every session.
func setup(t *testing.T, opts ...mcp.Option) (*server, map[string]core.Runnable, *atomic.Int32) {
	t.Helper()
	s := newServer()
	var reconnects atomic.Int32
	var mu sync.Mutex
	var clients []*mcpsdk.ClientSession
	track := func(cs *mcpsdk.ClientSession, err error) (*mcpsdk.ClientSession, error) {
		if err == nil {
			mu.Lock()
			clients = append(clients, cs)
			mu.Unlock()
		}
		return cs, err
	}
	cs, err := track(s.connect(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range clients {
			c.Close()
		}
		s.dropSessions()
	})
	opts = append([]mcp.Option{mcp.WithReconnect(func(ctx context.Context) (*mcpsdk.ClientSession, error) {
		reconnects.Add(1)
		return track(s.connect(ctx))
	})}, opts...)
	tools, err := mcp.Tools(t.Context(), cs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]core.Runnable{}
	for _, tl := range tools {
		byName[core.NameOf(tl)] = tl
	}
	return s, byName, &reconnects
}

func retried(t *testing.T, r core.Runnable, cfg retry.RetryConfig) *retry.RetryRunnable {
	t.Helper()
	rr, err := retry.New(r, cfg, retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(mnoop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

var fast = retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: 5 * time.Second}

func text(t *testing.T, out any) string {
	t.Helper()
	res, ok := out.(*mcpsdk.CallToolResult)
	if !ok || len(res.Content) == 0 {
		t.Fatalf("output = %#v, want a *CallToolResult with content", out)
	}
	return res.Content[0].(*mcpsdk.TextContent).Text
}

func TestFlakyReadOnlyToolRetriedToSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tools, _ := setup(t, mcp.WithTrustAnnotations())
		s.searchFails.Store(2)
		out, err := retried(t, tools["search"], fast).Invoke(t.Context(), map[string]any{"q": "retries"})
		if err != nil || text(t, out) != "found" || s.searches.Load() != 3 {
			t.Fatalf("Invoke() = %v, %v after %d calls, want found after 3", out, err, s.searches.Load())
		}
	})
}

func TestUntrustedAnnotationsAreIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tools, _ := setup(t)
		s.searchFails.Store(1)
		if core.IsIdempotent(tools["search"]) {
			t.Error("an untrusted read-only annotation made the tool idempotent")
		}
		_, err := retried(t, tools["search"], fast).Invoke(t.Context(), nil)
		if re, ok := errors.AsType[*retry.Error](err); !ok || re.Outcome != retry.OutcomeNotRetryable || s.searches.Load() != 1 {
			t.Errorf("Invoke() = %v after %d calls, want not_retryable after 1", err, s.searches.Load())
		}
		_, tools, _ = setup(t, mcp.WithIdempotent("search", true))
		if !core.IsIdempotent(tools["search"]) {
			t.Error("WithIdempotent(search, true) did not make it idempotent")
		}
	})
}

func TestIsErrorResultIsTheModelsAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, tools, _ := setup(t, mcp.WithIdempotent("report", true))
		out, err := retried(t, tools["report"], fast).Invoke(t.Context(), nil)
		if err != nil || !out.(*mcpsdk.CallToolResult).IsError {
			t.Fatalf("Invoke() = %v, %v, want the IsError result as the output", out, err)
		}
		_, tools, _ = setup(t, mcp.WithIdempotent("report", true), mcp.WithErrorResults())
		_, err = retried(t, tools["report"], fast).Invoke(t.Context(), nil)
		if te, ok := errors.AsType[*mcp.ToolError](err); !ok || te.Result == nil {
			t.Fatalf("with WithErrorResults: error = %v, want a *ToolError", err)
		}
		if re, _ := errors.AsType[*retry.Error](err); re.Attempts != 4 {
			t.Errorf("attempts = %d, want 4: WithErrorResults makes it retryable", re.Attempts)
		}
	})
}

func TestInvalidParamsAreNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, tools, _ := setup(t, mcp.WithIdempotent("strict", true))
		_, err := retried(t, tools["strict"], fast).Invoke(t.Context(), []byte(`{}`))
		re, ok := errors.AsType[*retry.Error](err)
		me, isMCP := errors.AsType[*mcp.Error](err)
		if !ok || re.Outcome != retry.OutcomeNotRetryable || re.Attempts != 1 || !isMCP || me.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("Invoke() = %v, want not_retryable after 1 attempt with JSON-RPC %d", err, jsonrpc.CodeInvalidParams)
		}
		if _, err := tools["strict"].Invoke(t.Context(), []byte(`{not json`)); err == nil {
			t.Error("malformed JSON arguments: want an error before the call")
		}
	})
}

// A tool with side effects whose reply is lost with its connection runs
// once: it is not retried. With RetryNonIdempotent the retry goes through
// a new session and the server, seeing the same InvocationID in _meta,
// does not repeat the side effect.
func TestLostReplyOfASideEffectingTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tools, reconnects := setup(t)
		s.loseReply.Store(true)
		_, err := retried(t, tools["create_ticket"], fast).Invoke(t.Context(), map[string]any{"title": "t"})
		if err == nil || s.effects.Load() != 1 {
			t.Fatalf("Invoke() = %v with %d effects, want the lost reply's error and one effect", err, s.effects.Load())
		}
		if reconnects.Load() != 1 {
			t.Errorf("reconnects = %d, want 1 (error %v: %#v)", reconnects.Load(), err, errors.Unwrap(err))
		}

		s, tools, _ = setup(t)
		s.loseReply.Store(true)
		cfg := fast
		cfg.RetryNonIdempotent = true
		out, err := retried(t, tools["create_ticket"], cfg).Invoke(t.Context(), map[string]any{"title": "t"})
		if err != nil || text(t, out) != "ticket created" || s.effects.Load() != 1 {
			t.Errorf("with RetryNonIdempotent: Invoke() = %v, %v with %d effects, want created once", out, err, s.effects.Load())
		}
	})
}

// 200 concurrent calls while the session drops: every call succeeds, and
// the session is reconnected once.
func TestConcurrentCallsWhileTheSessionDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tools, reconnects := setup(t, mcp.WithTrustAnnotations())
		r := retried(t, tools["search"], retry.RetryConfig{MaxRetries: 5, InitialBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond})
		var wg sync.WaitGroup
		var failed atomic.Int32
		for i := range 200 {
			if i == 100 {
				s.dropSessions()
			}
			wg.Go(func() {
				if _, err := r.Invoke(t.Context(), nil); err != nil {
					failed.Add(1)
					t.Log(err)
				}
			})
		}
		wg.Wait()
		if failed.Load() != 0 || reconnects.Load() != 1 {
			t.Errorf("failed calls %d, reconnects %d; want 0 and 1", failed.Load(), reconnects.Load())
		}
	})
}

// Over streamable HTTP on loopback: the server restarts, forgetting its
// sessions, and the session is reconnected.
func TestStreamableHTTPServerRestart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	var serving sync.WaitGroup
	defer serving.Wait()
	serve := func(ln net.Listener) (*http.Server, *server) {
		s := newServer()
		h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return s.srv }, nil)
		hs := &http.Server{Handler: h}
		serving.Go(func() { _ = hs.Serve(ln) })
		return hs, s
	}
	// stop ends a server as a process that dies does: its sessions with it.
	stop := func(hs *http.Server, s *server) {
		hs.Close()
		for ss := range s.srv.Sessions() {
			ss.Close()
		}
	}
	hs, s := serve(ln)
	var sessions []*mcpsdk.ClientSession
	dial := func(ctx context.Context) (*mcpsdk.ClientSession, error) {
		cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx,
			&mcpsdk.StreamableClientTransport{Endpoint: "http://" + addr, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err == nil {
			sessions = append(sessions, cs)
		}
		return cs, err
	}
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
		stop(hs, s)
	}()
	cs, err := dial(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var reconnects atomic.Int32
	tools, err := mcp.Tools(t.Context(), cs, mcp.WithTrustAnnotations(), mcp.WithReconnect(func(ctx context.Context) (*mcpsdk.ClientSession, error) {
		reconnects.Add(1)
		return dial(ctx)
	}))
	if err != nil {
		t.Fatal(err)
	}
	search := tools[0]
	for _, tl := range tools {
		if core.NameOf(tl) == "search" {
			search = tl
		}
	}
	// Real sockets cannot run on synctest's clock: backoffs of a millisecond.
	r := retried(t, search, retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	s.searchFails.Store(1)
	if _, err := r.Invoke(t.Context(), nil); err != nil {
		t.Fatalf("before the restart: %v", err)
	}
	stop(hs, s)
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	hs, s = serve(ln2)
	out, err := r.Invoke(t.Context(), nil)
	if err != nil || text(t, out) != "found" || reconnects.Load() != 1 {
		t.Errorf("after the restart: Invoke() = %v, %v with %d reconnects, want found after one", out, err, reconnects.Load())
	}
}

// A reconnect holds no lock across the network: a caller whose context
// ends while another caller's reconnect is under way returns at once with
// its own error; a caller that ran the reconnect and gives up hands it to
// one still waiting; the others share one reconnect.
func TestReconnectNeverHoldsCallersBehindIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var srv *server
		hold := make(chan struct{})
		var reconnects atomic.Int32
		var mu sync.Mutex
		var sessions []*mcpsdk.ClientSession
		t.Cleanup(func() {
			mu.Lock()
			defer mu.Unlock()
			for _, cs := range sessions {
				cs.Close()
			}
		})
		slowReconnect := mcp.WithReconnect(func(ctx context.Context) (*mcpsdk.ClientSession, error) {
			reconnects.Add(1)
			select {
			case <-hold: // the network answers
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			cs, err := srv.connect(ctx)
			if err == nil {
				mu.Lock()
				sessions = append(sessions, cs)
				mu.Unlock()
			}
			return cs, err
		})
		srv, tools, _ := setup(t, mcp.WithTrustAnnotations(), slowReconnect)
		search := retried(t, tools["search"], retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
		srv.dropSessions()

		invoke := func(ctx context.Context) <-chan error {
			done := make(chan error, 1)
			go func() {
				_, err := search.Invoke(ctx, nil)
				done <- err
			}()
			return done
		}
		// settle lets the callers' backoffs (a millisecond) pass, so that
		// each is in the reconnect or waits for it.
		settle := func() {
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
		}
		leaderCtx, leaderGivesUp := context.WithCancel(t.Context())
		leader := invoke(leaderCtx)
		settle()
		if n := reconnects.Load(); n != 1 {
			t.Fatalf("reconnects = %d once the first caller met the closed session, want 1", n)
		}
		waiterCtx, waiterGivesUp := context.WithCancel(t.Context())
		waiter := invoke(waiterCtx)
		patient := invoke(t.Context())
		settle() // both wait for the leader's reconnect

		waiterGivesUp()
		synctest.Wait()
		select {
		case err := <-waiter:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("a waiter whose context ended: Invoke() = %v, want its own context.Canceled", err)
			}
		default:
			t.Fatal("a waiter whose context ended is still waiting behind the reconnect")
		}

		leaderGivesUp()
		synctest.Wait() // the patient caller runs a reconnect of its own
		if err := <-leader; !errors.Is(err, context.Canceled) {
			t.Errorf("the leader that gave up: Invoke() = %v, want context.Canceled", err)
		}
		if n := reconnects.Load(); n != 2 {
			t.Errorf("reconnects = %d, want 2: the abandoned one, and the patient caller's", n)
		}
		others := []<-chan error{patient, invoke(t.Context()), invoke(t.Context())}
		settle()
		close(hold)
		for i, done := range others {
			if err := <-done; err != nil {
				t.Errorf("caller %d after the reconnect: Invoke() = %v, want success", i, err)
			}
		}
		if n := reconnects.Load(); n != 2 {
			t.Errorf("reconnects = %d, want 2: callers that came meanwhile share the patient caller's", n)
		}
	})
}

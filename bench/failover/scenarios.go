// Package failover measures how soon the chain docs/deployments.md shows
// (fallback over retry over a provider, restarts on) moves a broken call
// to its fallback, beside a reference router that moves on after one
// retry (#71). Each scenario is a primary that fails in one way, served
// through openai-go from llmhttptest replies, and a healthy fallback;
// every run is in virtual time (testing/synctest), so a table is the same
// on any machine but for the retry layer's jitter.
package failover

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/steadfast-go/steadfast/chaos"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
)

// Timing is one set of a failure's silences and the timeouts that find
// them out: the client's timeouts are the chain's, and the reference
// router's.
type Timing struct {
	Name string
	// PerAttempt, FirstChunk and Chunk are the timeouts: an attempt's
	// whole answer, its first chunk from the request, each chunk after.
	PerAttempt, FirstChunk, Chunk time.Duration
	// Stall is how long a stalled stream is silent before its connection
	// closes; Closing, how long a silent server waits to close one.
	Stall, Closing time.Duration
}

// Timings are the short and the long silences: 4-15 s, and the docs'
// real-world timeouts with 15-30 s.
var Timings = []Timing{
	{Name: "short", PerAttempt: 15 * time.Second, FirstChunk: 4 * time.Second, Chunk: 4 * time.Second, Stall: 15 * time.Second, Closing: 10 * time.Second},
	{Name: "long", PerAttempt: 30 * time.Second, FirstChunk: 20 * time.Second, Chunk: 15 * time.Second, Stall: 30 * time.Second, Closing: 20 * time.Second},
}

// Scenario is a primary that fails in one way, beside a healthy fallback.
type Scenario struct {
	Name string
	// Stream calls Stream with core.WithResets, reading the answer
	// through its Resets; else Invoke.
	Stream bool
	// Budget, when positive, is the caller's deadline.
	Budget time.Duration
	// Primary is the primary's server; Fallback the fallback's, nil for
	// one that answers every request whole.
	Primary  func(Timing) http.RoundTripper
	Fallback func() http.RoundTripper
	// ToolCall: the primary's stream delivers a tool call before it
	// breaks, so nothing may restart it: the caller gets the failure.
	ToolCall bool
}

// Scenarios are the failures of the issue, each as its provider sends it.
var Scenarios = []Scenario{
	{Name: "429, no Retry-After", Primary: always(apiError(429, "rate_limit_exceeded"))},
	{Name: "429, Retry-After 5 s", Primary: always(apiError(429, "rate_limit_exceeded", "Retry-After", "5"))},
	{Name: "503", Primary: always(apiError(503, "server_is_overloaded"))},
	{Name: "503, stream", Stream: true, Primary: always(apiError(503, "server_is_overloaded"))},
	{Name: "cut mid-answer", Stream: true, Primary: always(cut())},
	{Name: "cut, fallback refuses prefills", Stream: true, Primary: always(cut()), Fallback: refusingPrefills},
	{Name: "malformed event", Stream: true, Primary: always(malformed())},
	{Name: "stall after the first token", Stream: true, Primary: func(t Timing) http.RoundTripper { return always(stalled(t.Stall))(t) }},
	{Name: "15 s stall, 45 s budget", Stream: true, Budget: 45 * time.Second, Primary: always(stalled(15 * time.Second))},
	{Name: "no headers", Stream: true, Primary: func(Timing) http.RoundTripper { return llmhttptest.Hanging() }},
	{Name: "headers, no first token", Stream: true, Primary: func(Timing) http.RoundTripper { return llmhttptest.HeadersOnly() }},
	{Name: "silent", Primary: func(Timing) http.RoundTripper { return llmhttptest.Hanging() }},
	{Name: "closes when silent", Primary: func(t Timing) http.RoundTripper { return llmhttptest.ClosingAfter(t.Closing) }},
	{Name: "context overflow", Primary: func(Timing) http.RoundTripper {
		return chaos.Transport(llmhttptest.New(), chaos.ContextOverflow(128000, 126000, 4000).First(1<<20))
	}},
	{Name: "tool call, then cut", Stream: true, ToolCall: true, Primary: always(toolCallCut())},
}

const model = "gpt-4o-mini"

// answerTokens is how many tokens a whole answer has.
const answerTokens = 60

// Answer is the whole answer both servers give.
var Answer = strings.Join(tokens(answerTokens), "")

func tokens(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%02d ", i)
	}
	return out
}

func chunk(text string) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":%q,"choices":[{"index":0,"delta":{"content":%q}}]}`, model, text)
}

// stream is a stream of the answer's first n tokens, ended when end is set.
func stream(n int, end bool) llmhttptest.Reply {
	var events []string
	for _, tok := range tokens(n) {
		events = append(events, chunk(tok))
	}
	if end {
		events = append(events, "[DONE]")
	}
	return llmhttptest.SSE(events...)
}

func completion() llmhttptest.Reply {
	return llmhttptest.JSON(200, fmt.Sprintf(`{"id":"c1","object":"chat.completion","created":1,"model":%q,
		"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, model, Answer))
}

func apiError(status int, code string, header ...string) llmhttptest.Reply {
	return llmhttptest.JSON(status, fmt.Sprintf(`{"error":{"message":"%s","type":"server_error","param":null,"code":%q}}`, code, code), header...)
}

// cut is 40 of the answer's tokens, then the connection drops.
func cut() llmhttptest.Reply {
	r := stream(40, false)
	r.BreakAfter = io.ErrUnexpectedEOF
	return r
}

// malformed is the whole answer with its tenth event's JSON cut short.
func malformed() llmhttptest.Reply {
	r := stream(answerTokens, true)
	events := strings.SplitAfter(r.Body, "\n\n")
	events[9] = "data: {\"id\":\"c1\",\"choices\":[{\"delta\":\n\n"
	r.Body = strings.Join(events, "")
	return r
}

// stalled is 20 tokens, then d of silence, then the connection closes.
func stalled(d time.Duration) llmhttptest.Reply {
	r := stream(20, false)
	r.Stall = d
	return r
}

// toolCallCut is a tool call's first delta, then the connection drops.
func toolCallCut() llmhttptest.Reply {
	r := llmhttptest.SSE(fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":%q,"choices":[{"index":0,"delta":`+
		`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"charge_card","arguments":""}}]}}]}`, model))
	r.BreakAfter = io.ErrUnexpectedEOF
	return r
}

// always is a server that answers every request with r.
func always(r llmhttptest.Reply) func(Timing) http.RoundTripper {
	return func(Timing) http.RoundTripper {
		return llmhttptest.NewFunc(func(*http.Request, string) llmhttptest.Reply { return r })
	}
}

// healthy answers every request whole: a stream to a request that asks
// for one.
func healthy() http.RoundTripper {
	return llmhttptest.NewFunc(func(_ *http.Request, body string) llmhttptest.Reply {
		if strings.Contains(body, `"stream":true`) {
			return stream(answerTokens, true)
		}
		return completion()
	})
}

// refusingPrefills answers the whole answer, but refuses (400) a request
// that carries a part of it: a continuation's prefill.
func refusingPrefills() http.RoundTripper {
	return llmhttptest.NewFunc(func(_ *http.Request, body string) llmhttptest.Reply {
		if strings.Contains(body, tokens(1)[0]) {
			return llmhttptest.JSON(400, `{"error":{"message":"assistant prefill is not supported","type":"invalid_request_error"}}`)
		}
		return stream(answerTokens, true)
	})
}

// counted counts the requests a transport is sent.
type counted struct {
	next http.RoundTripper
	n    atomic.Int32
}

func (c *counted) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(req)
}

package llmhttptest

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/retry"
)

// Restarts is one provider for CheckRestarts: how to build its Runnable
// and the events of its wire format's streams.
type Restarts struct {
	// New builds the provider's Runnable on client.
	New func(client *http.Client) core.Runnable
	// Text reads a chunk's text.
	Text func(any) string
	// Start are the events that open a stream, before its first token;
	// Token is the event of one token of text; End the events that end
	// the stream.
	Start []string
	Token func(text string) string
	End   []string
	// ToolCall is the event of a tool call's start.
	ToolCall string
}

// RestartConfig is RouteConfig with docs/streams.md's ChunkTimeout and
// restarts on: the retry layer of the chain docs/deployments.md shows
// with restarts.
var RestartConfig = func() retry.RetryConfig {
	cfg := RouteConfig
	cfg.ChunkTimeout = 15 * time.Second
	cfg.RestartStreams = true
	return cfg
}()

// answerTokens is how many tokens a whole answer has.
const answerTokens = 60

// tokens returns the first n tokens of the answer.
func tokens(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%02d ", i)
	}
	return out
}

// stream returns a reply of p's stream of the first n tokens, with the
// events it ends with when end is set.
func (p Restarts) stream(n int, end bool) Reply {
	events := slices.Clone(p.Start)
	for _, tok := range tokens(n) {
		events = append(events, p.Token(tok))
	}
	if end {
		events = append(events, p.End...)
	}
	return SSE(events...)
}

// breaks are the ways a stream breaks after its first chunk, as the
// issue that asked for restarts found them.
func (p Restarts) breaks() map[string]Reply {
	cut := p.stream(40, false) // 40 of 60 tokens, no terminating event
	cut.BreakAfter = io.ErrUnexpectedEOF
	stalled := p.stream(20, false) // 20 tokens, then 30 s of silence
	stalled.Stall = 30 * time.Second
	whole := p.stream(answerTokens, true)
	events := strings.SplitAfter(whole.Body, "\n\n")
	at := len(p.Start) + 9                                          // the tenth token's event
	bad := "data: {\"type\":\"content_block_delta\",\"delta\":\n\n" // JSON cut short
	if name, _, ok := strings.Cut(events[at], "\n"); ok && strings.HasPrefix(name, "event:") {
		bad = name + "\n" + bad // the event keeps its name, as a broken proxy would
	}
	events[at] = bad
	malformed := whole
	malformed.Body = strings.Join(events, "")
	return map[string]Reply{"cut after 40 tokens": cut, "stall after 20 tokens": stalled, "tenth event invalid": malformed}
}

// primaryTurn is, for each break of breaks, how many requests a fallback's
// primary is sent before the fallback restarts the stream (#71).
var primaryTurn = map[string]int{"cut after 40 tokens": 2, "stall after 20 tokens": 1, "tenth event invalid": 1}

// CheckRestarts checks, through the provider's real SDK, DESIGN §11's
// restarts for each way a stream breaks after its first chunk: a caller
// that passed core.WithResets gets the whole answer after exactly one
// core.Reset per restart (from a retry layer with RestartStreams, and
// from a fallback whose next candidate refuses any request with the
// partial answer as a prefill); a caller that did not gets the partial
// answer and the failure, with no request to the fallback. A stream that
// delivered a tool call is not restarted.
func CheckRestarts(t *testing.T, p Restarts) {
	for name, broken := range p.breaks() {
		checkBreak(t, p, name, broken)
	}
	t.Run("tool call", func(t *testing.T) { checkToolCall(t, p) })
}

// checkBreak checks the restarts of a stream that breaks as broken does.
func checkBreak(t *testing.T, p Restarts, name string, broken Reply) {
	want := strings.Join(tokens(answerTokens), "")
	t.Run(name+"/retry", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			server := New(broken, p.stream(answerTokens, true))
			r := restarting(t, p, server)
			segments, last := segmentsOf(t, r, p.Text, core.WithResets())
			checkSegments(t, segments, last, want)
			if len(segments) != 2 || server.Requests() != 2 {
				t.Errorf("%d resets after %d requests, want 1 after 2", len(segments)-1, server.Requests())
			}
		})
	})
	t.Run(name+"/fallback", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			primary := New(broken, broken, broken, broken)
			second := refusingPrefills(p)
			f, err := fallback.New([]core.Runnable{restarting(t, p, primary), restarting(t, p, second)})
			if err != nil {
				t.Fatal(err)
			}
			segments, last := segmentsOf(t, f, p.Text, core.WithResets())
			checkSegments(t, segments, last, want)
			// The primary's retry layer restarts a cut stream once (its
			// second cut ends its turn), and a malformed event or a stall
			// not at all; then the fallback restarts it: one Reset each.
			if resets := len(segments) - 1; resets != primary.Requests() || second.Requests() != 1 {
				t.Errorf("%d resets, %d requests to the primary, %d to the fallback; want a reset per primary request, 1 to the fallback",
					resets, primary.Requests(), second.Requests())
			}
			if want := primaryTurn[name]; primary.Requests() != want {
				t.Errorf("%d requests to the primary, want %d: its turn ends at the first stall or malformed event, after one retry of a cut", primary.Requests(), want)
			}
		})
	})
	t.Run(name+"/no resets", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			primary, second := New(broken), New(p.stream(answerTokens, true))
			f, err := fallback.New([]core.Runnable{restarting(t, p, primary), restarting(t, p, second)})
			if err != nil {
				t.Fatal(err)
			}
			segments, last := segmentsOf(t, f, p.Text)
			if _, failed := last.(error); !failed || len(segments) != 1 || !strings.HasPrefix(want, segments[0]) || segments[0] == "" {
				t.Errorf("stream = %q then %v, want a part of the answer and the failure", segments, last)
			}
			if primary.Requests() != 1 || second.Requests() != 0 {
				t.Errorf("requests: primary %d, fallback %d; want 1 and 0", primary.Requests(), second.Requests())
			}
		})
	})
}

// checkToolCall checks that a stream that delivered a tool call and then
// broke is not restarted.
func checkToolCall(t *testing.T, p Restarts) {
	synctest.Test(t, func(t *testing.T) {
		called := SSE(append(slices.Clone(p.Start), p.ToolCall)...)
		called.BreakAfter = io.ErrUnexpectedEOF
		primary, second := New(called, called), New(p.stream(answerTokens, true))
		f, err := fallback.New([]core.Runnable{restarting(t, p, primary), restarting(t, p, second)})
		if err != nil {
			t.Fatal(err)
		}
		segments, last := segmentsOf(t, f, p.Text, core.WithResets())
		if _, failed := last.(error); !failed || len(segments) != 1 {
			t.Errorf("stream = %q then %v, want no reset and the failure", segments, last)
		}
		if primary.Requests() != 1 || second.Requests() != 0 {
			t.Errorf("requests: primary %d, fallback %d; want 1 and 0", primary.Requests(), second.Requests())
		}
	})
}

// restarting is p's Runnable over transport, behind a retry layer under
// RestartConfig.
func restarting(t *testing.T, p Restarts, transport http.RoundTripper) core.Runnable {
	t.Helper()
	return routedWith(t, p.New, RestartConfig, transport)
}

// refusingPrefills is a server that answers the whole answer, but refuses
// (400) a request that carries a part of it: a continuation's prefill.
func refusingPrefills(p Restarts) *Server {
	return NewFunc(func(_ *http.Request, body string) Reply {
		if strings.Contains(body, tokens(1)[0]) {
			return JSON(400, `{"error":{"message":"assistant prefill is not supported","type":"invalid_request_error"}}`)
		}
		return p.stream(answerTokens, true)
	})
}

// segmentsOf streams r and returns the text of each run of chunks a
// core.Reset ends, the last run last, and the stream's last value.
func segmentsOf(t *testing.T, r core.Runnable, text func(any) string, opts ...core.Option) (segments []string, last any) {
	t.Helper()
	ch, err := r.Stream(t.Context(), "Say hello", opts...)
	if err != nil {
		t.Fatalf("Stream() error = %v", err)
	}
	segments = []string{""}
	for v := range ch {
		last = v
		switch v := v.(type) {
		case core.Reset:
			segments = append(segments, "")
		case error:
		default:
			segments[len(segments)-1] += text(v)
		}
	}
	return segments, last
}

// checkSegments checks that every run of chunks before a Reset is a part
// of the answer from its start, so that no chunk of a voided attempt came
// after its Reset, and that the last run is the whole answer.
func checkSegments(t *testing.T, segments []string, last any, want string) {
	t.Helper()
	if err, failed := last.(error); failed {
		t.Fatalf("the stream failed: %v (runs %q)", err, segments)
	}
	for i, s := range segments[:len(segments)-1] {
		if s == "" || !strings.HasPrefix(want, s) {
			t.Errorf("run %d before a reset = %q, want a part of the answer from its start", i, s)
		}
	}
	if got := segments[len(segments)-1]; got != want {
		t.Errorf("after the last reset: %q, want the whole answer %q", got, want)
	}
}

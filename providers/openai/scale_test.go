package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/internal/warmup"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// Background responses held open at once, far more than any fixed-size
// memory of calls, each cut after its first delta: every stream is resumed
// on its own response, from its own sequence number, and delivers every
// event exactly once; what was kept of each call goes with it, and the
// heap comes back to where it was before the calls.
func TestEveryResponsesStreamResumesAtScale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var created atomic.Int64
		var resumed atomic.Int64
		srv := llmhttptest.NewFunc(func(req *http.Request, _ string) llmhttptest.Reply {
			switch {
			case req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/responses"):
				id := "resp_" + strconv.FormatInt(created.Add(1), 10)
				return answer(id).Stream(5, io.ErrUnexpectedEOF) // up to the first delta
			case req.Method == http.MethodGet && req.URL.Query().Get("stream") == "true":
				resumed.Add(1)
				id := req.URL.Path[strings.LastIndexByte(req.URL.Path, '/')+1:]
				after, err := strconv.Atoi(req.URL.Query().Get("starting_after"))
				if err != nil {
					return llmhttptest.JSON(400, `{"error":{"message":"starting_after","type":"invalid_request_error"}}`)
				}
				return answer(id).After(after)
			}
			return llmhttptest.JSON(404, `{"error":{"message":"no such route","type":"invalid_request_error"}}`)
		})
		cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Second, ResumeStreams: true}
		r, err := retry.New(openai.NewResponses(model, option.WithAPIKey("k"), option.WithBaseURL("http://openai.test/v1/"),
			option.WithHTTPClient(srv.Client()), openai.WithResumableStreams()), cfg,
			retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		// A small round warms up the client; plain goroutines then take
		// the runtime past the peak of the measured round
		// (internal/warmup), for a fraction of a round's cost.
		warm, base := max(openStreams/50, 100), runtime.NumGoroutine()
		var before, peak uint64
		for round, n := range []int{warm, openStreams} {
			if round == 1 {
				before = warmup.Heap()
			}
			created.Store(0)
			resumed.Store(0)
			var alive int
			peak, alive = streamRound(t, r, n)
			synctest.Wait()
			if created.Load() != int64(n) || resumed.Load() != int64(n) {
				t.Fatalf("round %d: %d responses created, %d resumed, want %d each", round, created.Load(), resumed.Load(), n)
			}
			if round == 0 {
				warmup.ForCalls(openStreams, warm, base, alive)
			}
		}
		after := warmup.Heap()
		t.Logf("%d streams: heap %d KiB before, %d KiB with all open, %d KiB after", openStreams, before>>10, peak>>10, after>>10)
		if grown := int64(after) - int64(before); grown > 4<<20 {
			t.Errorf("heap after %d streams ended = %d KiB, %d KiB over before them: per-call state outlived its calls", openStreams, after>>10, grown>>10)
		}
		runtime.KeepAlive(r)
	})
}

// streamRound streams n responses of r at once, each read to its end,
// and returns the heap and the goroutines alive while all were open.
func streamRound(t *testing.T, r *retry.RetryRunnable, n int) (peak uint64, alive int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var firsts, done sync.WaitGroup
	firsts.Add(n)
	done.Add(n)
	bad := make(chan string, n)
	for range n {
		go func() {
			defer done.Done()
			if problem := readResumed(ctx, r, &firsts); problem != "" {
				bad <- problem
			}
		}()
	}
	firsts.Wait() // every stream is open
	alive = runtime.NumGoroutine()
	peak = warmup.Heap()
	done.Wait()
	close(bad)
	wrong := 0
	for problem := range bad {
		if wrong++; wrong <= 3 {
			t.Error(problem)
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d streams wrong", wrong, n)
	}
	return peak, alive
}

// readResumed reads one stream of r, signalling firsts at its first event
// and waiting there until every stream has had its first, and says what
// is wrong with it: "" when it delivered the events 0 to 7 of one
// response exactly once, in order.
func readResumed(ctx context.Context, r *retry.RetryRunnable, firsts *sync.WaitGroup) string {
	ch, err := r.Stream(ctx, "Say hello")
	if err != nil {
		firsts.Done()
		return err.Error()
	}
	next, id, signalled := int64(0), "", false
	problem := ""
	for v := range ch {
		ev, ok := v.(responses.ResponseStreamEventUnion)
		switch {
		case !ok:
			problem = fmt.Sprintf("value %v", v)
		case ev.SequenceNumber != next:
			problem = fmt.Sprintf("event %d, want %d", ev.SequenceNumber, next)
		case ev.Response.ID != "" && id != "" && ev.Response.ID != id:
			problem = fmt.Sprintf("events of %s and %s in one stream", id, ev.Response.ID)
		}
		if ev.Response.ID != "" {
			id = ev.Response.ID
		}
		next++
		if !signalled {
			signalled = true
			firsts.Done()
			firsts.Wait()
		}
	}
	if !signalled {
		firsts.Done()
	}
	if problem == "" && next != 8 {
		problem = fmt.Sprintf("%d events, want 8", next)
	}
	return problem
}

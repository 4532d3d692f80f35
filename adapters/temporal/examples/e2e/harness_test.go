package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/temporaltest"

	"github.com/steadfast-go/steadfast/adapters/temporal/examples/internal/leakcheck"
	"github.com/steadfast-go/steadfast/internal/llmhttptest"
)

// The environment of a worker process: the test binary run again as a
// Temporal worker (see TestMain).
const (
	envWorker    = "STEADFAST_E2E_WORKER" // the Runnable it serves: "responses" or "resumer"
	envTemporal  = "STEADFAST_E2E_TEMPORAL"
	envNamespace = "STEADFAST_E2E_NAMESPACE"
	envProvider  = "STEADFAST_E2E_PROVIDER" // the fake OpenAI server's URL
	envSink      = "STEADFAST_E2E_SINK"     // the subscriber's URL
)

// Task queues: workflows run in the test process, activities in workers.
const (
	workflowQueue = "e2e-workflows"
	activityQueue = "e2e-activities"
)

func TestMain(m *testing.M) {
	if kind := os.Getenv(envWorker); kind != "" {
		os.Exit(runWorker(kind))
	}
	leakcheck.Main(m)
}

// quiet is a logger that drops the SDK's and the server's lines.
var quiet = log.NewStructuredLogger(slog.New(slog.DiscardHandler))

// newServer starts a Temporal server in the test process, stopped when
// the test ends.
func newServer(t *testing.T) *temporaltest.TestServer {
	t.Helper()
	return temporaltest.NewServer(temporaltest.WithT(t),
		temporaltest.WithBaseClientOptions(client.Options{Logger: quiet}))
}

// streamWorkflow runs the activity "stream" on the activities' task queue,
// with a short heartbeat timeout so that a dead worker is noticed within a
// second, and unlimited activity attempts.
func streamWorkflow(ctx workflow.Context, input string) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           activityQueue,
		StartToCloseTimeout: time.Minute,
		HeartbeatTimeout:    time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, BackoffCoefficient: 1},
	})
	return workflow.ExecuteActivity(ctx, "stream", input).Get(ctx, nil)
}

// workerProcess is a worker in a process of its own.
type workerProcess struct {
	cmd *exec.Cmd
	out strings.Builder
}

// startWorker runs the test binary again as a worker of kind, serving the
// activities' task queue.
func startWorker(t *testing.T, ts *temporaltest.TestServer, kind, provider, sink string) *workerProcess {
	t.Helper()
	w := &workerProcess{cmd: exec.Command(os.Args[0], "-test.run=^$")}
	w.cmd.Env = append(os.Environ(), envWorker+"="+kind, envTemporal+"="+ts.GetFrontendHostPort(),
		envNamespace+"="+ts.GetDefaultNamespace(), envProvider+"="+provider, envSink+"="+sink)
	w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.out
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = w.cmd.Process.Kill()
		_ = w.cmd.Wait()
		if t.Failed() && w.out.Len() > 0 {
			t.Logf("worker %d said:\n%s", w.cmd.Process.Pid, w.out.String())
		}
	})
	return w
}

// kill kills the worker with SIGKILL: no deferred call, no last heartbeat.
func (w *workerProcess) kill(t *testing.T) {
	t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = w.cmd.Wait()
}

// runWorker is the worker process: it serves the activity "stream" until
// it is killed.
func runWorker(kind string) int {
	c, err := client.Dial(client.Options{HostPort: os.Getenv(envTemporal), Namespace: os.Getenv(envNamespace), Logger: quiet})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	defer c.Close()
	// Heartbeats reach the server at most every 100ms (the SDK's default
	// is 80 % of the heartbeat timeout): the chunks delivered after the
	// last one are those delivered again when a worker dies.
	w := worker.New(c, activityQueue, worker.Options{MaxHeartbeatThrottleInterval: 100 * time.Millisecond})
	fn, err := streamActivity(kind, os.Getenv(envProvider), os.Getenv(envSink))
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	w.RegisterActivityWithOptions(fn, activityOptions("stream"))
	if err := w.Run(worker.InterruptCh()); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	return 0
}

// delivery is one chunk as the subscriber receives it.
type delivery struct {
	Seq  int    `json:"seq"`
	Text string `json:"text"` // what the chunk says, compared to what was sent
}

// sink is the stream's subscriber, an HTTP endpoint the workers post each
// chunk to. It keeps each chunk once by its Seq, as a subscriber does, and
// counts the chunks posted again (those delivered after the last heartbeat
// that reached the server before a worker died).
type sink struct {
	srv     *httptest.Server
	mu      sync.Mutex
	order   []delivery // first deliveries, in the order they came
	seen    map[int]string
	again   int
	garbled []string
	reached chan struct{} // closed once half is delivered
	half    int
}

func newSink(t *testing.T, half int) *sink {
	s := &sink{seen: map[int]string{}, reached: make(chan struct{}), half: half}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) serve(w http.ResponseWriter, r *http.Request) {
	var d delivery
	if err := json.NewDecoder(r.Body).Decode(&d); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.seen[d.Seq]; ok {
		s.again++
		if prev != d.Text {
			s.garbled = append(s.garbled, fmt.Sprintf("chunk %d was %q, then %q", d.Seq, prev, d.Text))
		}
		return
	}
	s.seen[d.Seq] = d.Text
	s.order = append(s.order, d)
	if len(s.seen) == s.half {
		close(s.reached)
	}
}

// post is a worker's deliver: it posts the chunk to the subscriber.
func post(ctx context.Context, url string, d delivery) error {
	body, err := json.Marshal(d)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// slowResponses is an OpenAI Responses API that streams a background
// response slowly: POST /responses streams every event, GET
// /responses/{id}?stream=true&starting_after=N those after N, one event
// every gap, and answers no other request.
type slowResponses struct {
	srv    *httptest.Server
	events []string
	gap    time.Duration
	mu     sync.Mutex
	paths  []string
}

func newSlowResponses(t *testing.T, words int, gap time.Duration) *slowResponses {
	script := llmhttptest.NewResponses("resp_e2e").Event("response.created", "")
	for i := range words {
		script.Event("response.output_text.delta", fmt.Sprintf(`"item_id":"m1","output_index":0,"content_index":0,"delta":"w%02d "`, i+1))
	}
	script.Event("response.completed", "")
	body := script.Stream(-1, nil).Body
	s := &slowResponses{events: strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n"), gap: gap}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *slowResponses) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.paths = append(s.paths, r.Method+" "+r.URL.RequestURI())
	s.mu.Unlock()
	from := 0
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses"):
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/responses/resp_e2e") && r.URL.Query().Get("stream") == "true":
		var after int
		if _, err := fmt.Sscan(r.URL.Query().Get("starting_after"), &after); err != nil {
			http.Error(w, "starting_after: "+err.Error(), http.StatusBadRequest)
			return
		}
		from = after + 1
	default:
		http.Error(w, "not here", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	for _, ev := range s.events[min(from, len(s.events)):] {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(s.gap):
		}
		if _, err := io.WriteString(w, ev+"\n\n"); err != nil {
			return
		}
		flusher.Flush()
	}
}

func (s *slowResponses) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

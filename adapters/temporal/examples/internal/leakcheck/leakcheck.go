// Package leakcheck fails a test binary that leaves steadfast's goroutines
// running. goleak cannot guard these packages as it is: the in-process
// Temporal server leaves goroutines of its own (and of grpc) running after
// Stop, which are not ours to end; this checks only the goroutines with a
// frame of steadfast's code. Workflow functions are the exception: the SDK
// runs them in coroutines of its own, and one blocked when its worker
// stopped (a workflow terminated while it waited) is the SDK's to end.
package leakcheck

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// ours marks a goroutine running steadfast's code; workflowCoroutine, one
// the SDK runs a workflow function in.
const (
	ours              = "github.com/steadfast-go/steadfast/"
	workflowCoroutine = "go.temporal.io/sdk/internal.(*dispatcherImpl).NewCoroutine"
)

// Main runs the tests, then fails the binary when goroutines running
// steadfast's code outlive them by more than a few seconds.
func Main(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := wait(5 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "leakcheck: goroutines of steadfast still running after the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// wait returns the stacks of the goroutines, other than the caller's, with
// a frame of steadfast's code, once none is left or after d.
func wait(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		leaked := running()
		if leaked == "" || time.Now().After(deadline) {
			return leaked
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func running() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	stacks := strings.Split(string(buf), "\n\n")
	var leaked []string
	for _, s := range stacks[1:] { // the first is the caller's
		if strings.Contains(s, ours) && !strings.Contains(s, ours+"adapters/temporal/examples/internal/leakcheck") &&
			!strings.Contains(s, "created by "+workflowCoroutine) {
			leaked = append(leaked, s)
		}
	}
	return strings.Join(leaked, "\n\n")
}

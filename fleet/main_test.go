package fleet_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests, or, in a process a test started, one worker of
// a fleet (see worker_test.go).
func TestMain(m *testing.M) {
	if name := os.Getenv(workerEnv); name != "" {
		n, err := runWorker(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(2)
		}
		fmt.Printf("result %d\n", n)
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/synctest"

	gk "github.com/firebase/genkit/go/genkit"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	// os/signal's loop, started by Init, lives as long as the process.
	if err := goleak.Find(goleak.IgnoreTopFunction("os/signal.signal_recv")); code == 0 && err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func TestRun(t *testing.T) {
	// Each run its own Genkit (its model is registered by name), made
	// outside the synctest bubble: Init listens for signals
	// (signal.NotifyContext), a goroutine no bubble can wait out.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	g := gk.Init(ctx)
	synctest.Test(t, func(t *testing.T) { // the server's wait takes no real time
		var out bytes.Buffer
		if err := run(g, &out); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"attempt 1 failed (429 Too Many Requests (rate_limit_exceeded)), retrying in 300ms (retry_after)",
			`answer: "Hello from Genkit" after 2 model calls`,
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
		if n := strings.Count(out.String(), "chunk:"); n != 3 {
			t.Errorf("%d chunks printed; want 3, each once:\n%s", n, out.String())
		}
	})
}

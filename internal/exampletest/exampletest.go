// Package exampletest runs an example program's run function under the
// fake clock of testing/synctest and checks what it printed.
package exampletest

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/synctest"
)

// Check runs run in a synctest bubble, so the example's backoffs take no
// real time, and reports each of want that its output lacks. Runs of white
// space are folded before comparing, so padded columns match single spaces.
func Check(t *testing.T, run func(io.Writer) error, want ...string) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		t.Helper()
		var out bytes.Buffer
		if err := run(&out); err != nil {
			t.Fatalf("run() error = %v", err)
		}
		folded := strings.Join(strings.Fields(out.String()), " ")
		for _, w := range want {
			if !strings.Contains(folded, strings.Join(strings.Fields(w), " ")) {
				t.Errorf("output lacks %q:\n%s", w, out.String())
			}
		}
	})
}

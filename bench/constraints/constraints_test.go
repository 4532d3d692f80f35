package constraints

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Under 10 000 random failures a seed, 5 seeds, a call that requires a tag
// never reaches a deployment without it, one that excludes a tag never one
// with it, and none meets a *route.Error, since a candidate always meets
// its constraints (#73, item 3). CONSTRAINTS_OUT=dir writes the table.
func TestConstraintTargets(t *testing.T) {
	var b strings.Builder
	b.WriteString("# go test -count=1 -run ConstraintTargets ./constraints (CONSTRAINTS_OUT=results/constraints); virtual time\n")
	b.WriteString("# retry ⊃ fallback ⊃ [retry ⊃ pool(eu-1, eu-2, us-1), claude (us)]; half the calls require region:eu, half exclude it; Invoke, Batch, Stream in turn\n")
	fmt.Fprintf(&b, "%-5s %6s %6s %6s %6s %8s %6s\n", "seed", "fails", "calls", "served", "failed", "outside", "unmet")
	for seed := uint64(1); seed <= 5; seed++ {
		synctest.Test(t, func(t *testing.T) {
			r, err := Run(seed, 10_000)
			if err != nil {
				t.Fatal(err)
			}
			if r.Outside != 0 || r.Unmet != 0 || r.Served == 0 {
				t.Errorf("seed %d: %+v; want no call outside its constraints, none unmet, some served", seed, r)
			}
			fmt.Fprintf(&b, "%-5d %s\n", seed, r)
		})
	}
	if dir := os.Getenv("CONSTRAINTS_OUT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "constraints.txt"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

package ejection

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// seeds is how many seeded runs each model gets.
const seeds = 5

func play(t *testing.T) [][]Result {
	t.Helper()
	out := make([][]Result, len(Models))
	for i, m := range Models {
		for seed := range uint64(seeds) {
			synctest.Test(t, func(t *testing.T) {
				r, err := Run(m, seed+1)
				if err != nil {
					t.Fatal(err)
				}
				out[i] = append(out[i], r)
			})
		}
	}
	return out
}

// near reports whether got is want less at most a tenth (the jitter), plus
// up to a second for the calls after its return that went elsewhere.
func near(got, want time.Duration) bool { return got >= want-want/10 && got <= want+time.Second }

// The pool's outlier ejection over the family (#73, item 2): a flapping
// deployment is out 5 s, 10 s, 20 s and back to 5 s after clean minutes,
// its peers never; failures every deployment shares (an outage, an
// overload of all) eject none; a deployment worse than a partial outage is
// ejected and the rest are not; failures at random that no deployment
// owns eject none. EJECTION_OUT=dir writes the table.
func TestEjectionTargets(t *testing.T) {
	runs := play(t)
	for i, m := range Models {
		for s, r := range runs[i] {
			name := fmt.Sprintf("%s, seed %d", m.Name, s+1)
			switch {
			case strings.HasPrefix(m.Name, "flapping"):
				e := r.Ejections[0]
				if len(e) < 5 || !near(e[0], 5*time.Second) || !near(e[1], 10*time.Second) || !near(e[2], 20*time.Second) || !near(e[4], 5*time.Second) {
					t.Errorf("%s: a's ejections %v, want 5 s, 10 s, 20 s…, then 5 s after clean minutes", name, e)
				}
				if n := r.CooledIn(1, 3); n != 0 {
					t.Errorf("%s: the healthy peers ejected %d times, want never", name, n)
				}
			case strings.HasPrefix(m.Name, "partial"):
				if r.Cooled[0] == 0 || r.CooledIn(1, 4) != 0 {
					t.Errorf("%s: ejections %v (gaps %v), want a's, and none of its peers'", name, r.Cooled, r.Ejections)
				}
			default:
				if n := r.CooledIn(0, m.Deployments); n != 0 {
					t.Errorf("%s: ejections %v (gaps %v), want none: no deployment owns these failures", name, r.Cooled, r.Ejections)
				}
			}
		}
	}
	if dir := os.Getenv("EJECTION_OUT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "ejection.txt"), []byte(table(runs)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// table is the committed table: each model's ejections per deployment,
// per seed.
func table(runs [][]Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# go test -count=1 -run EjectionTargets ./ejection (EJECTION_OUT=results/ejection); virtual time, %d calls/s Poisson, WithCooldown's defaults (3 in a minute, 5 s)\n", rate)
	for i, m := range Models {
		fmt.Fprintf(&b, "\n%s (%d deployments, %v)\n", m.Name, m.Deployments, m.Run)
		for s, r := range runs[i] {
			fmt.Fprintf(&b, "  seed %d:", s+1)
			for d, e := range r.Ejections {
				outs := make([]string, len(e))
				for k, g := range e {
					outs[k] = g.Round(100 * time.Millisecond).String()
				}
				fmt.Fprintf(&b, "  %c %d calls, %d ejected, out [%s]", 'a'+d, r.Calls[d], r.Cooled[d], strings.Join(outs, " "))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

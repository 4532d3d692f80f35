package runbudget

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

// Under each fault model, 5 seeds, runs of 10, 50 and 200 calls: the
// providers see exactly the run's calls, retries and fallbacks included,
// the run's spend says so, and the run ends by its calls (#73, item 5).
// RUNBUDGET_OUT=dir writes the table.
func TestRunBudgetTargets(t *testing.T) {
	var b strings.Builder
	b.WriteString("# go test -count=1 -run RunBudgetTargets ./runbudget (RUNBUDGET_OUT=results/runbudget); virtual time\n")
	b.WriteString("# retry ⊃ fallback ⊃ [retry ⊃ pool(a, b), backup]; Invoke and Stream in turn until the run ends; 5 seeds a row\n")
	fmt.Fprintf(&b, "%-9s %5s %-22s %-16s %-18s %s\n", "model", "limit", "requests (each seed)", "backup's", "calls answered", "ended by")
	for _, m := range Models {
		for _, limit := range []int{10, 50, 200} {
			var reqs, backup, served []string
			ended := map[string]int{}
			for seed := uint64(1); seed <= 5; seed++ {
				synctest.Test(t, func(t *testing.T) {
					r, err := Run(m, limit, seed)
					if err != nil {
						t.Fatal(err)
					}
					if r.Requests != limit || r.Spent != limit || r.Ended != "calls" {
						t.Errorf("%s, a run of %d calls, seed %d: %+v; want exactly %d requests, spent, ended by calls", m.Name, limit, seed, r, limit)
					}
					reqs = append(reqs, fmt.Sprint(r.Requests))
					backup = append(backup, fmt.Sprint(r.Backup))
					served = append(served, fmt.Sprintf("%d/%d", r.Served, r.Calls))
					ended[r.Ended]++
				})
			}
			fmt.Fprintf(&b, "%-9s %5d %-22s %-16s %-18s %v\n", m.Name, limit, strings.Join(reqs, " "), strings.Join(backup, " "), strings.Join(served, " "), ended)
		}
	}
	if dir := os.Getenv("RUNBUDGET_OUT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "runbudget.txt"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

package brownout

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

const seeds = 5

// row is one model, seeded runs with and without the slow-call rule.
type row struct {
	m       Model
	with    []Result
	without []Result
}

func play(t *testing.T) []row {
	t.Helper()
	var rows []row
	for _, m := range Models {
		r := row{m: m}
		for seed := range uint64(seeds) {
			for _, on := range []bool{true, false} {
				synctest.Test(t, func(t *testing.T) {
					res, err := Run(m, seed+1, on)
					if err != nil {
						t.Fatal(err)
					}
					if on {
						r.with = append(r.with, res)
					} else {
						r.without = append(r.without, res)
					}
				})
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// A brownout without errors, time to answer ×5 or more on every call,
// opens the circuit within one window (10 s) and the backup answers most
// calls from then on; without the rule the circuit never opens. A primary
// that is not slow on half of its calls (no brownout, ×2 under a 1.5 s
// threshold of a 400 ms median, a slow tail of a tenth or a third) never
// opens it while calls arrive (#73, item 4). BROWNOUT_OUT=dir writes the
// table.
func TestBrownoutTargets(t *testing.T) {
	rows := play(t)
	for _, r := range rows {
		opens := r.m.Share == 1 && r.m.Factor >= 5
		for s := range r.with {
			w, wo := r.with[s], r.without[s]
			name := fmt.Sprintf("%s, seed %d", r.m.Name, s+1)
			if w.Failed != 0 || wo.Failed != 0 {
				t.Errorf("%s: %d and %d calls failed, want none", name, w.Failed, wo.Failed)
			}
			if wo.Opened >= 0 {
				t.Errorf("%s: without the rule the circuit opened, after %v", name, wo.Opened)
			}
			switch {
			case opens && (w.Opened < 0 || w.Opened > Rule.Window):
				t.Errorf("%s: opened after %v, want within one window (%v)", name, w.Opened, Rule.Window)
			case opens && w.ToBackup < 0.5:
				t.Errorf("%s: the backup answered %.0f %% of the calls from the brownout on, want most", name, 100*w.ToBackup)
			case !opens && w.Opened >= 0 && !w.Drained():
				t.Errorf("%s: opened after %v, want never: most calls are under the threshold", name, w.Opened)
			}
		}
	}
	if dir := os.Getenv("BROWNOUT_OUT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "brownout.txt"), []byte(table(rows)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func table(rows []row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# go test -count=1 -run BrownoutTargets ./brownout (BROWNOUT_OUT=results/brownout); virtual time\n")
	fmt.Fprintf(&b, "# primary: log-normal, median %v, σ 0.5; backup %v; %d calls/s Poisson for %v, the brownout from %v; fallback over breaker(primary), backup\n",
		median, backupAt, rate, run, at)
	fmt.Fprintf(&b, "# rule: WithSlowCalls(%v, %.1f, %d, %v); 'opened' is after the brownout began (* after the last call arrived, as the calls under way ended); shares and latencies of the calls from it on\n\n",
		Rule.Threshold, Rule.Rate, Rule.MinCalls, Rule.Window)
	fmt.Fprintf(&b, "%-38s %-5s  %-8s %7s  %8s %8s\n", "model", "seed", "opened", "backup", "p50", "p99")
	for _, r := range rows {
		for s := range r.with {
			fmt.Fprintf(&b, "%-38s %-5d  %s\n", r.m.Name, s+1, r.with[s])
			fmt.Fprintf(&b, "%-38s %-5s  %s\n", "  without the slow-call rule", "", r.without[s])
		}
	}
	return b.String()
}

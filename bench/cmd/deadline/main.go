// Command deadline runs the storms of bench/deadline, every call with a
// deadline of its own (none, 12× and 50× the provider's service time), for
// every library, and reports success within the deadline, attempts per
// call, the p99 of successful calls and the calls served a second, with
// the targets of issue #46 judged for steadfast's recommended budget. It
// writes the table to -out/deadline/seed-<seed>.txt.
//
//	go run ./cmd/deadline            # about 12 minutes
//	go run ./cmd/deadline -seed 2    # a second run
//	go run ./cmd/deadline -quick     # a short smoke run: one shape, one deadline
//	go run ./cmd/deadline -shape collapse -deadlines none -libs no-retry,steadfast+adaptive -seed 3
//	                                 # a part of it, for more seeds; writes nothing
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/steadfast-go/steadfast/bench"
	"github.com/steadfast-go/steadfast/bench/cli"
	"github.com/steadfast-go/steadfast/bench/deadline"
	"github.com/steadfast-go/steadfast/bench/storm"
)

var (
	seed = flag.Uint64("seed", 1, "seed of the arrivals and think times")
	only = flag.String("shape", "", "run only these shapes, comma-separated")
	dls  = flag.String("deadlines", "", "run only these deadlines, comma-separated (none, 240ms, 1s)")
	libs = flag.String("libs", "", "run only these libraries, comma-separated (no-retry, steadfast+adaptive, …)")
)

// recommended is the library whose targets are judged.
const recommended = "steadfast+adaptive"

func main() {
	cli.Main("deadline", "run the overload shape alone, with the 240ms deadline, and write nothing", run)
}

func run(ctx context.Context, w io.Writer, quick bool, out string) error {
	shapes, deadlines := deadline.Shapes, deadline.Deadlines
	if quick {
		s := shapes[0]
		s.Duration = time.Second
		shapes, deadlines = []deadline.Shape{s}, deadlines[1:2]
	}
	var buf strings.Builder
	mw := io.MultiWriter(w, &buf)
	fmt.Fprintf(mw, "# deadline storms, seed %d, %s\n", *seed, time.Now().UTC().Format(time.DateOnly))
	fmt.Fprintf(mw, "policy: %d attempts, %v doubling to %v, jitter %v; %s: retry.RecommendedBudget()\n",
		deadline.Policy.Attempts, deadline.Policy.Initial, deadline.Policy.Max, deadline.Policy.Jitter, recommended)
	for _, s := range shapes {
		if !listed(*only, s.Name) {
			continue
		}
		for _, d := range deadlines {
			if !listed(*dls, name(d)) {
				continue
			}
			var results []deadline.Result
			for _, r := range storm.Contenders(deadline.Policy) {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if !listed(*libs, r.Name()) {
					continue
				}
				results = append(results, deadline.Run(ctx, s, r, d, *seed))
			}
			table(mw, s, d, results)
		}
	}
	if quick || *only != "" || *dls != "" || *libs != "" {
		return nil // a part of the table is not the table: nothing is written
	}
	dir := filepath.Join(out, "deadline")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%d.txt", *seed)), []byte(buf.String()), 0o644)
}

// listed reports whether name is in the comma-separated list, or the
// list is empty.
func listed(list, name string) bool {
	return list == "" || strings.Contains(","+list+",", ","+name+",")
}

func name(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	return d.String()
}

// table prints one shape under one deadline, and the targets.
func table(w io.Writer, s deadline.Shape, d time.Duration, results []deadline.Result) {
	fmt.Fprintf(w, "\n## %s, deadline %s\n\n", s.Name, name(d))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "library\tcalls\tsuccess\tattempts/call\tp99 ok\tserved/s\toutage attempts\trecovered\t")
	for _, r := range results {
		rec := "-"
		if s.Metastable {
			rec = "never"
			if r.Recovered >= 0 {
				rec = r.Recovered.String()
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f %%\t%.2f\t%v\t%.1f\t%d\t%s\t\n", r.Library, r.Calls, 100*r.SuccessShare(),
			r.AttemptsPerCall(), r.P99.Round(time.Millisecond), r.Served, r.OutageAtts, rec)
	}
	tw.Flush()
	var me, none deadline.Result
	best := deadline.Result{Library: ""}
	for _, r := range results {
		switch {
		case r.Library == recommended:
			me = r
		case r.Library == "no-retry":
			none = r
		case bench.IsPeer(r.Library) && (best.Library == "" || r.SuccessShare() > best.SuccessShare()):
			best = r
		}
	}
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT MET"
	}
	switch s.Name {
	case "overload", "spike":
		fmt.Fprintf(w, "\ntarget: success ≥ the best peer's (%s, %.1f %%) − 2 points: %.1f %%, %s\n",
			best.Library, 100*best.SuccessShare(), 100*me.SuccessShare(), mark(me.SuccessShare() >= best.SuccessShare()-0.02))
	case "outage":
		fmt.Fprintf(w, "\ntarget: attempts during the outage ≤ 1.2 × no retry's (%d): %d, %s\n",
			none.OutageAtts, me.OutageAtts, mark(float64(me.OutageAtts) <= 1.2*float64(none.OutageAtts)))
	case "collapse":
		fmt.Fprintf(w, "\ntarget: success ≥ the best peer's (%s, %.1f %%): %.1f %%, %s\n",
			best.Library, 100*best.SuccessShare(), 100*me.SuccessShare(), mark(me.SuccessShare() >= best.SuccessShare()))
		if d == 0 {
			ok := me.Recovered >= 0 && (none.Recovered < 0 || me.Recovered <= none.Recovered)
			fmt.Fprintf(w, "target: recovered no later than no retry (%v): %v, %s\n", none.Recovered, me.Recovered, mark(ok))
		}
	}
}

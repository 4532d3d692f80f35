package concurrency

import (
	"fmt"
	"image/color"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/steadfast-go/steadfast/bench/chart"
)

// familyRun is every contender's run of one shape over one model.
type familyRun struct {
	shape     Shape
	spread    float64
	capacity  int
	contender []ShapeResult // in the order of Names
}

// playFamily plays every shape over every model of the family (Spreads ×
// Capacities), each contender in a bubble of its own.
func playFamily(t *testing.T) []familyRun {
	t.Helper()
	var runs []familyRun
	for _, spread := range Spreads {
		for _, c := range Capacities {
			for _, sh := range Shapes {
				run := familyRun{shape: sh, spread: spread, capacity: c, contender: make([]ShapeResult, len(Names))}
				for i := range Names {
					synctest.Test(t, func(t *testing.T) {
						r, err := RunShape(i, sh, QueueingModel(spread), c, 1, FamilyConfig)
						if err != nil {
							t.Fatal(err)
						}
						run.contender[i] = r
					})
				}
				runs = append(runs, run)
			}
		}
	}
	return runs
}

// knownMisses are the family's targets steadfast does not meet, by
// "shape spread capacity: target", each with why (bench/README.md
// "Concurrency that reads queueing"). A miss not listed fails; a listed
// one that is met is logged.
var knownMisses = map[string]string{
	// An interactive call that finds every slot busy waits for the next
	// to free: at capacity C with answers of 1.4 s on average that wait
	// is exponential with mean 1.4/C s, and its p99 alone (0.8 s at C =
	// 8, 0.27 s at 24) is more than half the unloaded p99 of uniform
	// prompts (0.35 s); no limiter that does not take slots from batch
	// calls under way meets 1.5× there.
	"priorities 1 8: interactive p99":    "a free slot's own wait",
	"priorities 1 24: interactive p99":   "a free slot's own wait",
	"priorities 1 64: interactive p99":   "a free slot's own wait, and a queue of a call or two",
	"priorities 2.26 8: interactive p99": "a free slot's own wait",
	// At a capacity of 8 failsafe-go's limit settles at the capacity
	// with no 429 (its gradient reads the queue at 8 as well as we do),
	// and steadfast's probes past it meet the queue's end now and then.
	"steady 3x 1 8: ahead of failsafe-go":            "ties at full goodput; our probes' 429s",
	"ramp 1 8: ahead of failsafe-go":                 "ties at full goodput; our probes' 429s",
	"steady 3x 2.26 8: ahead of failsafe-go":         "ties at full goodput; our probes' 429s",
	"ramp 2.26 8: ahead of failsafe-go":              "ties at full goodput; our probes' 429s",
	"steady 3x 4 8: ahead of failsafe-go":            "ties at full goodput; our probes' 429s",
	"ramp 4 8: ahead of failsafe-go":                 "ties at full goodput; our probes' 429s",
	"halved, restored 2.26 8: goodput after step 3":  "restored 2x: 87.5 % against 87.5 % wanted; the probe past the old ceiling",
	"halved, restored 2.26 64: goodput after step 3": "restored 2x: the probe past the old ceiling",
	// Unloaded, both limiters stay out of the way at a capacity of 8:
	// the same p99 as no limiter, a tie.
	"unloaded 1 8: ahead of failsafe-go":    "a tie at no limiter's p99",
	"unloaded 2.26 8: ahead of failsafe-go": "a tie at no limiter's p99",
	"unloaded 4 8: ahead of failsafe-go":    "a tie at no limiter's p99",
}

// The family's targets (#70): against seeded Queueing models whose
// prompt spread runs from uniform to a p99/p50 of 4, at capacities 8, 24
// and 64, each shape played by every contender in one run: steadfast's
// goodput at least 90 % of the fixed limit's in steady overload, from
// 10 s after each capacity step and on a ramp; 429s at most 3 %;
// interactive p99 under 3× overload at most 1.5× the unloaded p99 (no
// limiter's); unloaded, at most 1.1× no limiter's; ahead of failsafe-go
// in goodput, in 429s or in interactive p99 in every shape.
func TestFamilyTargets(t *testing.T) {
	if raceEnabled {
		t.Skip("the bench runs without -race")
	}
	runs := playFamily(t)
	unloaded := map[string]time.Duration{}
	for _, r := range runs {
		if r.shape.Name == "unloaded" {
			unloaded[fmt.Sprint(r.spread, r.capacity)] = r.contender[3].InteractiveP99
		}
	}
	met, missed := 0, map[string]bool{}
	check := func(r familyRun, target string, ok bool, format string, args ...any) {
		key := fmt.Sprintf("%s %v %d: %s", r.shape.Name, r.spread, r.capacity, target)
		_, known := knownMisses[key]
		switch {
		case ok && known: // a borderline one may go either way from one goroutine order to the next
			met++
			t.Logf("%s: met, though listed as a known miss", key)
		case ok:
			met++
		case known:
			missed[key] = true
			t.Logf("known miss %s: %s", key, fmt.Sprintf(format, args...))
		default:
			t.Errorf("%s: %s", key, fmt.Sprintf(format, args...))
		}
	}
	var table strings.Builder
	logf := func(format string, args ...any) {
		t.Logf(format, args...)
		fmt.Fprintf(&table, format+"\n", args...)
	}
	logf("| shape | spread | C | steadfast goodput | fixed | failsafe-go | 429s steadfast / failsafe-go | interactive p99 steadfast / failsafe-go / fixed / unloaded |")
	for _, r := range runs {
		sf, fs, fixed := r.contender[0], r.contender[1], r.contender[2]
		logf("| %s | %v | %d | %s | %s | %s | %.2f / %.2f %% | %v / %v / %v / %v |", r.shape.Name, r.spread, r.capacity,
			spans(sf), spans(fixed), spans(fs), 100*sf.Limited, 100*fs.Limited, ms(sf.InteractiveP99), ms(fs.InteractiveP99),
			ms(fixed.InteractiveP99), ms(unloaded[fmt.Sprint(r.spread, r.capacity)]))
		if r.shape.Batch(time.Hour) > 0 && !r.shape.Interactive {
			for k, g := range sf.Goodput {
				check(r, fmt.Sprintf("goodput after step %d", k+1), g >= 0.9*fixed.Goodput[k], "%.1f %% of the capacity, the fixed limit's %.1f %%", 100*g, 100*fixed.Goodput[k])
			}
		}
		check(r, "429s", sf.Limited <= 0.03, "%.2f %% of requests", 100*sf.Limited)
		idle := unloaded[fmt.Sprint(r.spread, r.capacity)]
		switch r.shape.Name {
		case "priorities":
			check(r, "interactive p99", sf.InteractiveP99 <= idle*3/2, "%v, unloaded %v", sf.InteractiveP99, idle)
		case "unloaded":
			check(r, "unloaded p99", sf.InteractiveP99 <= idle*11/10, "%v, no limiter's %v", sf.InteractiveP99, idle)
		}
		ahead := sf.MeanGoodput() > fs.MeanGoodput()+0.005 || sf.Limited < fs.Limited ||
			(r.shape.Interactive && sf.InteractiveP99 < fs.InteractiveP99)
		check(r, "ahead of failsafe-go", ahead, "goodput %.1f / %.1f %%, 429s %.2f / %.2f %%, p99 %v / %v",
			100*sf.MeanGoodput(), 100*fs.MeanGoodput(), 100*sf.Limited, 100*fs.Limited, sf.InteractiveP99, fs.InteractiveP99)
	}
	logf("\n%d targets met, %d known misses", met, len(missed))
	if out := os.Getenv("FAMILY_OUT"); out != "" {
		if err := saveFamily(out, table.String(), runs); err != nil {
			t.Fatal(err)
		}
	}
}

// saveFamily writes the table to out/family.txt and, to
// out/family-limit.png, steadfast's limit against the capacity through
// "halved, restored" at the real traffic's spread, each capacity's as a
// share of it.
func saveFamily(out, table string, runs []familyRun) error {
	p := plot.New()
	p.Title.Text = "steadfast's limit ÷ the model's capacity, capacity halved at 20 s and restored at 40 s (prompt spread 2.26)"
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "share of the capacity"
	p.Legend.Top = true
	colors := []color.Color{color.RGBA{214, 39, 40, 255}, color.RGBA{44, 160, 44, 255}, color.RGBA{148, 103, 189, 255}, color.Black}
	n := 0
	for _, r := range runs {
		if r.shape.Name != "halved, restored" || r.spread != 2.26 {
			continue
		}
		sf := r.contender[0]
		limit, capacity := make(plotter.XYs, len(sf.Limit)), make(plotter.XYs, len(sf.Capacity))
		for k := range sf.Limit {
			limit[k] = plotter.XY{X: float64(k + 1), Y: sf.Limit[k] / float64(r.capacity)}
			capacity[k] = plotter.XY{X: float64(k + 1), Y: sf.Capacity[k] / float64(r.capacity)}
		}
		line, err := plotter.NewLine(limit)
		if err != nil {
			return err
		}
		line.Color = colors[n%len(colors)]
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("limit, C = %d", r.capacity), line)
		if n == 0 {
			cl, err := plotter.NewLine(capacity)
			if err != nil {
				return err
			}
			cl.Color, cl.Dashes = colors[3], []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(cl)
			p.Legend.Add("capacity", cl)
		}
		n++
	}
	return chart.Save(out, "family", table, p, 28*vg.Centimeter, 12*vg.Centimeter)
}

// The priorities example of docs/concurrency.md refuses no call at light
// load: interactive calls at a quarter of the capacity, alone, through
// its configuration (MaxWait 20 s), at every capacity of the family.
func TestTheExampleRefusesNothingUnloaded(t *testing.T) {
	for _, c := range Capacities {
		synctest.Test(t, func(t *testing.T) {
			r, err := RunShape(0, Shapes[len(Shapes)-1], QueueingModel(2.26), c, 1, ExampleConfig)
			if err != nil {
				t.Fatal(err)
			}
			if r.Refused != 0 || r.Interactive == 0 {
				t.Errorf("capacity %d: %d calls refused of %d answered, want none", c, r.Refused, r.Interactive)
			}
		})
	}
}

func spans(r ShapeResult) string {
	s := ""
	for k, g := range r.Goodput {
		if k > 0 {
			s += " / "
		}
		s += fmt.Sprintf("%.1f", 100*g)
	}
	return s
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

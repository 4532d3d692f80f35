// Package brownout plays a breaker with a slow-call rate against seeded
// brownouts, in virtual time: a primary whose answers come late without an
// error, behind breaker.WithSlowCalls inside a fallback with a healthy
// backup. bench/README.md has the table (results/brownout).
package brownout

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"
	mnoop "go.opentelemetry.io/otel/metric/noop"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
)

// Model is one brownout: from At, a share of the primary's calls take
// Factor times as long.
type Model struct {
	Name   string
	Factor float64
	Share  float64 // of the calls from At that are slow
}

// Models are the family.
var Models = []Model{
	{"no brownout", 1, 1},
	{"×2 on every call", 2, 1},
	{"×5 on every call", 5, 1},
	{"×10 on every call", 10, 1},
	{"×5 on a tenth of the calls (a tail)", 5, 0.1},
	{"×5 on a third of the calls", 5, 1.0 / 3},
}

// The shape every model shares.
const (
	median   = 400 * time.Millisecond // the primary's time to answer, log-normal, σ 0.5
	backupAt = 600 * time.Millisecond // the backup's
	at       = 20 * time.Second       // when the brownout starts
	run      = 60 * time.Second
	rate     = 10 // calls a second, Poisson
)

// Rule is the slow-call rule under test: WithSlowCalls' arguments.
var Rule = struct {
	Threshold time.Duration
	Rate      float64
	MinCalls  int
	Window    time.Duration
}{1500 * time.Millisecond, 0.5, 20, 10 * time.Second}

// Result is one run.
type Result struct {
	Opened     time.Duration // after the brownout began; -1 for never
	ToBackup   float64       // share of the calls from the brownout on that the backup answered
	P50, P99   time.Duration // of the answers to the calls from the brownout on
	Failed     int
	Calls      int
	SlowRuleOn bool
}

func (r Result) String() string {
	opened := "never"
	if r.Opened >= 0 {
		opened = r.Opened.Round(100 * time.Millisecond).String()
	}
	if r.Drained() {
		opened += "*"
	}
	return fmt.Sprintf("%-8s %5.1f %%  %8v %8v  %d failed of %d", opened, 100*r.ToBackup,
		r.P50.Round(10*time.Millisecond), r.P99.Round(10*time.Millisecond), r.Failed, r.Calls)
}

// Drained reports a circuit that opened only after the last call arrived,
// while the calls under way finished: the slow ones end last, so a window
// then holds more of them than the traffic had.
func (r Result) Drained() bool { return r.Opened > run-at }

// Run plays m with seed, with the slow-call rule or without it. It must
// run inside a synctest bubble.
func Run(m Model, seed uint64, slowRule bool) (Result, error) {
	start := time.Now()
	var mu sync.Mutex
	lat := rand.New(rand.NewPCG(seed, 1))
	primary := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		mu.Lock()
		d := float64(median) * math.Exp(0.5*lat.NormFloat64())
		if !time.Now().Before(start.Add(at)) && lat.Float64() < m.Share {
			d *= m.Factor
		}
		mu.Unlock()
		time.Sleep(time.Duration(d))
		return "primary", nil
	})
	backup := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		time.Sleep(backupAt)
		return "backup", nil
	})
	opened := time.Duration(-1)
	opts := []breaker.Option{breaker.WithMeterProvider(mnoop.NewMeterProvider()),
		breaker.WithOnStateChange(func(_ string, _, to gobreaker.State) {
			mu.Lock()
			defer mu.Unlock()
			if to == gobreaker.StateOpen && opened < 0 {
				opened = time.Since(start) - at
			}
		})}
	if slowRule {
		opts = append(opts, breaker.WithSlowCalls(Rule.Threshold, Rule.Rate, Rule.MinCalls, Rule.Window))
	}
	cb, err := breaker.New(primary, gobreaker.Settings{Name: "primary", Timeout: 30 * time.Second}, opts...)
	if err != nil {
		return Result{}, err
	}
	fb, err := fallback.New([]core.Runnable{cb, backup}, fallback.WithMeterProvider(mnoop.NewMeterProvider()))
	if err != nil {
		return Result{}, err
	}
	res := Result{SlowRuleOn: slowRule}
	var took []time.Duration
	backups := 0
	arrivals := rand.New(rand.NewPCG(seed, 2))
	var wg sync.WaitGroup
	for end := start.Add(run); time.Now().Before(end); time.Sleep(time.Duration(arrivals.ExpFloat64() / rate * float64(time.Second))) {
		t0 := time.Now()
		wg.Go(func() {
			out, err := fb.Invoke(context.Background(), "q")
			mu.Lock()
			defer mu.Unlock()
			if t0.Before(start.Add(at)) {
				return
			}
			res.Calls++
			if err != nil {
				res.Failed++
				return
			}
			took = append(took, time.Since(t0))
			if out == "backup" {
				backups++
			}
		})
	}
	wg.Wait()
	res.Opened = opened
	slices.Sort(took)
	if n := len(took); n > 0 {
		res.P50, res.P99 = took[n/2], took[n*99/100]
		res.ToBackup = float64(backups) / float64(n)
	}
	return res, nil
}

// Package ejection plays the pool's outlier ejection against a family of
// seeded failure models, in virtual time: a deployment that flaps, an
// outage of them all, a partial outage with one worse than the rest, and
// failures at random that no deployment owns. bench/README.md has the
// table (results/ejection).
package ejection

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/pool"
)

// Model is a family member: the deployments' failure rates over time.
type Model struct {
	Name string
	// Fails returns deployment i's chance of failing a call at since
	// from the start.
	Fails       func(i int, since time.Duration) float64
	Deployments int
	Run         time.Duration
}

// Models are the family.
var Models = []Model{
	{"flapping: a fails all calls for 45 s, again from 7 min", func(i int, t time.Duration) float64 {
		if i == 0 && (t < 45*time.Second || t >= 7*time.Minute) {
			return 1
		}
		return 0
	}, 3, 8 * time.Minute},
	{"provider-wide outage: all fail every call for 2 min", func(int, time.Duration) float64 { return 1 }, 3, 2 * time.Minute},
	{"overload of all: all fail 60 % for 2 min", func(int, time.Duration) float64 { return 0.6 }, 3, 2 * time.Minute},
	{"partial outage: all fail 60 %, a fails all", func(i int, _ time.Duration) float64 {
		if i == 0 {
			return 1
		}
		return 0.6
	}, 4, 2 * time.Minute},
	{"noise: all fail 10 % at random", func(int, time.Duration) float64 { return 0.1 }, 3, 5 * time.Minute},
	{"noise: all fail 30 % at random", func(int, time.Duration) float64 { return 0.3 }, 3, 5 * time.Minute},
}

// Result is one run: each deployment's ejections, as the gaps in its
// calls, and as the pool counted them (pool.cooldowns).
type Result struct {
	Ejections [][]time.Duration
	Calls     []int
	// Cooled is each deployment's pool.cooldowns: the count the targets
	// hold, since a gap in a deployment's calls may also be the pool's
	// unseeded choice passing it over.
	Cooled []int64
}

// rate is the calls a second offered to the pool.
const rate = 20

// gap is the longest pause between a deployment's calls that the table
// shows as the length of an ejection: the shortest is 5 s less a tenth.
// The pool's choice (two drawn at random, unseeded) may pass a deployment
// with a poor score over for seconds too (4.9 s once, under -race): the
// targets count ejections by the pool's own counter, Cooled.
const gap = 4400 * time.Millisecond

var errServer = errors.New("503")

type status struct{ error }

func (status) StatusCode() int { return 503 }

// deployment fails by its model, seeded, and notes its calls.
type deployment struct {
	i     int
	m     Model
	start time.Time
	mu    sync.Mutex
	rng   *rand.Rand
	calls []time.Time
}

func (d *deployment) invoke(context.Context, any, ...core.Option) (any, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	d.calls = append(d.calls, now)
	if d.rng.Float64() < d.m.Fails(d.i, now.Sub(d.start)) {
		return nil, status{errServer}
	}
	return "ok", nil
}

// Run plays m with seed. It must run inside a synctest bubble.
func Run(m Model, seed uint64) (Result, error) {
	start := time.Now()
	ds := make([]*deployment, m.Deployments)
	pds := make([]pool.Deployment, m.Deployments)
	for i := range ds {
		ds[i] = &deployment{i: i, m: m, start: start, rng: rand.New(rand.NewPCG(seed, uint64(i)))}
		pds[i] = pool.Deployment{Name: string(rune('a' + i)), Runnable: core.RunnableFunc(ds[i].invoke)}
	}
	reader := sdkmetric.NewManualReader()
	p, err := pool.New(pds, pool.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		return Result{}, err
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	for end := start.Add(m.Run); time.Now().Before(end); {
		_, _ = p.Invoke(context.Background(), "q")
		time.Sleep(time.Duration(rng.ExpFloat64() / rate * float64(time.Second)))
	}
	var res Result
	for _, d := range ds {
		var outs []time.Duration
		for i := 1; i < len(d.calls); i++ {
			if g := d.calls[i].Sub(d.calls[i-1]); g > gap {
				outs = append(outs, g)
			}
		}
		res.Ejections = append(res.Ejections, outs)
		res.Calls = append(res.Calls, len(d.calls))
	}
	res.Cooled, err = cooldowns(reader, pds)
	return res, err
}

// cooldowns reads each deployment's pool.cooldowns from reader.
func cooldowns(reader *sdkmetric.ManualReader, pds []pool.Deployment) ([]int64, error) {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		return nil, err
	}
	out := make([]int64, len(pds))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if m.Name != "pool.cooldowns" || !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				name, _ := dp.Attributes.Value("pool.deployment")
				for i, d := range pds {
					if d.Name == name.AsString() {
						out[i] += dp.Value
					}
				}
			}
		}
	}
	return out, nil
}

// CooledIn is the pool's cooldowns of deployments in [from, to).
func (r Result) CooledIn(from, to int) int64 {
	var n int64
	for _, c := range r.Cooled[from:min(to, len(r.Cooled))] {
		n += c
	}
	return n
}

// Count is the ejections of deployments in [from, to).
func (r Result) Count(from, to int) int {
	n := 0
	for _, e := range r.Ejections[from:min(to, len(r.Ejections))] {
		n += len(e)
	}
	return n
}

// Longest is the longest ejection of any deployment.
func (r Result) Longest() time.Duration {
	var m time.Duration
	for _, e := range r.Ejections {
		if len(e) > 0 {
			m = max(m, slices.Max(e))
		}
	}
	return m
}

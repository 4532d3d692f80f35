package concurrency

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	"github.com/failsafe-go/failsafe-go/priority"

	"github.com/steadfast-go/steadfast/ratelimit"
)

// PriorityResult is what the priority scenario measured of one limiter:
// the p99 of an interactive call (from asking to its answer, its retries
// after a 429 or a refusal included) with and without batch work beside
// it, the longest answered attempt of a batch call (its wait for a permit
// and its answer) while interactive calls competed, the answers of the
// loaded phase, and its 429s over its requests.
type PriorityResult struct {
	IdleP99, LoadedP99 time.Duration
	LongestBatch       time.Duration
	BatchAnswers       int
	Answers            int     // interactive and batch, in the loaded phase
	Limited            float64 // the provider's 429s over its requests, in the loaded phase
}

// PriorityNames are the limiters the priority scenario plays, in the
// order RunPriority takes them.
var PriorityNames = []string{"steadfast", "failsafe-go priority limiter"}

// A gate is one attempt of a call of the class given through a limiter.
type gate func(ctx context.Context, interactive bool) error

// newGate returns limiter i of PriorityNames over p, and what stops it.
func newGate(i int, p *Provider) (gate, func(), error) {
	if i == 1 {
		through, stop := failsafeGate()
		return func(ctx context.Context, interactive bool) error {
			return through(ctx, interactive, func() error { return drain(p.Stream(ctx, "q")) })
		}, stop, nil
	}
	r, err := ratelimit.NewConcurrency(p, ratelimit.ConcurrencyConfig{Initial: 8, Max: 1000, MaxStarvation: PriorityStarvation})
	if err != nil {
		return nil, nil, err
	}
	return func(ctx context.Context, interactive bool) error {
		class := ratelimit.Batch
		if interactive {
			class = ratelimit.Interactive
		}
		return drain(r.Stream(ratelimit.WithPriority(ctx, class), "q"))
	}, func() {}, nil
}

// failsafeGate returns failsafe-go's prioritized adaptive limiter (limits
// 1–1000, initial 8) as a function that makes call with a permit: its prioritizer sheds the lowest levels
// when its limiters queue, and is calibrated every second, as its docs
// show; interactive calls are priority.High, the others priority.Low.
func failsafeGate() (through func(ctx context.Context, interactive bool, call func() error) error, stop func()) {
	pr := adaptivelimiter.NewPrioritizer()
	fs := adaptivelimiter.NewBuilder[any]().WithLimits(1, 1000, 8).BuildPrioritized(pr)
	stop = pr.ScheduleCalibrations(context.Background(), time.Second)
	return func(ctx context.Context, interactive bool, call func() error) error {
		level := priority.Low
		if interactive {
			level = priority.High
		}
		permit, err := fs.AcquirePermit(priority.ContextWithPriority(ctx, level))
		if err != nil {
			return err
		}
		if err := call(); err != nil {
			permit.Drop()
			return err
		}
		permit.Record()
		return nil
	}, stop
}

// PriorityCapacity, PriorityStarvation and PriorityRun are the priority
// scenario's provider, MaxStarvation and measured span.
const (
	PriorityCapacity   = 20
	PriorityStarvation = 10 * time.Second
	PriorityRun        = 60 * time.Second
)

// RunPriority plays the priority scenario through limiter i of
// PriorityNames: 8 interactive clients, each asking again a second after
// its answer, first alone, then beside 100 closed-loop batch clients that
// keep the provider saturated.
func RunPriority(i int, seed uint64) (PriorityResult, error) {
	var res PriorityResult
	idle, err := priorityPhase(i, seed, 0)
	if err != nil {
		return res, err
	}
	res, err = priorityPhase(i, seed, 100)
	res.IdleP99 = idle.LoadedP99
	return res, err
}

// phase is one run of the priority scenario: its limiter, and what its
// calls measured.
type phase struct {
	g    gate
	mu   sync.Mutex
	res  PriorityResult
	took []time.Duration // the interactive calls'
}

// call asks until it is answered, and returns how long that took; it
// keeps the longest answered attempt of a batch call (its wait for a
// permit and its answer) and counts the answers.
func (ph *phase) call(ctx context.Context, interactive bool) time.Duration {
	start := time.Now()
	for ctx.Err() == nil {
		attempt := time.Now()
		if ph.g(ctx, interactive) == nil {
			if ctx.Err() == nil {
				ph.mu.Lock()
				ph.res.Answers++
				if !interactive {
					ph.res.BatchAnswers++
					ph.res.LongestBatch = max(ph.res.LongestBatch, time.Since(attempt))
				}
				ph.mu.Unlock()
			}
			break
		}
		select {
		case <-time.After(Pause):
		case <-ctx.Done():
		}
	}
	return time.Since(start)
}

// priorityPhase runs the interactive clients through limiter i beside
// batch batch clients, and returns what they measured (the interactive
// p99 in LoadedP99).
func priorityPhase(i int, seed uint64, batch int) (PriorityResult, error) {
	p := NewProvider(DefaultModel, PriorityCapacity, seed)
	g, stop, err := newGate(i, p)
	if err != nil {
		return PriorityResult{}, err
	}
	defer stop()
	ph := &phase{g: g}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range batch {
		wg.Go(func() {
			for ctx.Err() == nil {
				ph.call(ctx, false)
			}
		})
	}
	time.Sleep(20 * time.Second)             // the limit finds the capacity
	ictx, stopRun := context.WithCancel(ctx) // no deadline: none is refused for one
	time.AfterFunc(PriorityRun, stopRun)
	ph.mu.Lock()
	ph.res = PriorityResult{} // the calls once interactive ones compete
	ph.mu.Unlock()
	ok0, limited0, _ := p.Counts()
	for range 8 {
		wg.Go(func() {
			for ictx.Err() == nil {
				d := ph.call(ictx, true)
				if ictx.Err() == nil {
					ph.mu.Lock()
					ph.took = append(ph.took, d)
					ph.mu.Unlock()
				}
				select {
				case <-time.After(time.Second):
				case <-ictx.Done():
				}
			}
		})
	}
	<-ictx.Done()
	ok, limited, _ := p.Counts()
	cancel()
	wg.Wait()
	if n := ok - ok0 + limited - limited0; n > 0 {
		ph.res.Limited = float64(limited-limited0) / float64(n)
	}
	slices.Sort(ph.took)
	if len(ph.took) > 0 {
		ph.res.LoadedP99 = ph.took[len(ph.took)*99/100]
	}
	return ph.res, nil
}

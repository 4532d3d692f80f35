package concurrency

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/steadfast-go/steadfast/ratelimit"
)

// PriorityResult is what the priority scenario measured: the p99 of an
// interactive call (from asking to its answer, its retries after a 429
// included) with and without batch work beside it, and the longest
// answered attempt of a batch call (its wait for a permit and its
// answer) while interactive calls competed.
type PriorityResult struct {
	IdleP99, LoadedP99 time.Duration
	LongestBatch       time.Duration
	BatchAnswers       int
}

// PriorityCapacity, PriorityStarvation and PriorityRun are the priority
// scenario's provider, MaxStarvation and measured span.
const (
	PriorityCapacity   = 20
	PriorityStarvation = 10 * time.Second
	PriorityRun        = 60 * time.Second
)

// RunPriority plays the priority scenario through ratelimit.Concurrency:
// 8 interactive clients, each asking again a second after its answer,
// first alone, then beside 100 closed-loop batch clients that keep the
// provider saturated.
func RunPriority(seed uint64) (PriorityResult, error) {
	var res PriorityResult
	var err error
	if res.IdleP99, _, _, err = priorityPhase(seed, 0); err != nil {
		return res, err
	}
	res.LoadedP99, res.LongestBatch, res.BatchAnswers, err = priorityPhase(seed, 100)
	return res, err
}

// priorityPhase runs the interactive clients beside batch batch clients
// and returns the interactive p99, the longest batch call and the batch
// answers.
func priorityPhase(seed uint64, batch int) (p99, longest time.Duration, answers int, err error) {
	p := NewProvider(DefaultModel, PriorityCapacity, seed)
	r, err := ratelimit.NewConcurrency(p, ratelimit.ConcurrencyConfig{Initial: 8, Max: 1000, MaxStarvation: PriorityStarvation})
	if err != nil {
		return 0, 0, 0, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var interactive []time.Duration
	// call asks until it is answered; longest keeps the longest attempt
	// that was (its wait for a permit and its answer).
	call := func(ctx context.Context) time.Duration {
		start := time.Now()
		for ctx.Err() == nil {
			attempt := time.Now()
			if drain(r.Stream(ctx, "q")) == nil {
				if ctx.Err() == nil {
					mu.Lock()
					longest = max(longest, time.Since(attempt))
					mu.Unlock()
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
	var wg sync.WaitGroup
	for range batch {
		wg.Go(func() {
			bctx := ratelimit.WithPriority(ctx, ratelimit.Batch)
			for ctx.Err() == nil {
				call(bctx)
				if ctx.Err() == nil {
					mu.Lock()
					answers++
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(20 * time.Second)          // the limit finds the capacity
	ictx, stop := context.WithCancel(ctx) // no deadline: none is refused for one
	time.AfterFunc(PriorityRun, stop)
	mu.Lock()
	longest = 0 // the batch calls' attempts once interactive ones compete
	mu.Unlock()
	for range 8 {
		wg.Go(func() {
			uctx := ratelimit.WithPriority(ictx, ratelimit.Interactive)
			for ictx.Err() == nil {
				d := call(uctx)
				if ictx.Err() == nil {
					mu.Lock()
					interactive = append(interactive, d)
					mu.Unlock()
				}
				select {
				case <-time.After(time.Second):
				case <-ictx.Done():
				}
			}
		})
	}
	<-ictx.Done()
	cancel()
	wg.Wait()
	slices.Sort(interactive)
	if len(interactive) > 0 {
		p99 = interactive[len(interactive)*99/100]
	}
	return p99, longest, answers, nil
}

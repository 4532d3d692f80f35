package pool_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/pool"
)

// flapper is a deployment that fails while failing is set, and notes when
// it was called.
type flapper struct {
	mu      sync.Mutex
	failing bool
	calls   []time.Time
}

func (f *flapper) set(failing bool) { f.mu.Lock(); f.failing = failing; f.mu.Unlock() }

func (f *flapper) Invoke(context.Context, any, ...core.Option) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, time.Now())
	if f.failing {
		return nil, err503
	}
	return "ok", nil
}

func (f *flapper) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(f.Invoke).Batch(ctx, in, opts...)
}

func (f *flapper) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(f.Invoke).Stream(ctx, in, opts...)
}

// outs returns the gaps over 3 s between f's calls: its ejections.
func (f *flapper) outs(since time.Time) []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var gaps []time.Duration
	for i := 1; i < len(f.calls); i++ {
		if f.calls[i].After(since) {
			if g := f.calls[i].Sub(f.calls[i-1]); g > 3*time.Second {
				gaps = append(gaps, g)
			}
		}
	}
	return gaps
}

// traffic calls p every 100 ms for d.
func traffic(p *pool.Runnable, d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		_, _ = p.Invoke(context.Background(), "q")
	}
}

// within reports whether got is want less at most a tenth (the jitter),
// plus up to a second for the calls after its return that happened to go
// to the other deployment.
func within(got, want time.Duration) bool {
	return got >= want-want/10 && got <= want+time.Second
}

// A flapping deployment's ejections grow, 5 s, 10 s, 20 s (and 40 s, the
// fourth, as the 45 s end), and shrink again after clean windows: each
// clean minute from its return forgives one, so six forgive them all (#73).
func TestAFlappingDeploymentsEjectionsGrowAndShrink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := &flapper{failing: true}, &flapper{}
		p := newPool(t, []pool.Deployment{{Name: "a", Runnable: a}, {Name: "b", Runnable: b}})
		start := time.Now()
		traffic(p, 45*time.Second)
		gaps := a.outs(start)
		if len(gaps) < 3 || !within(gaps[0], 5*time.Second) || !within(gaps[1], 10*time.Second) || !within(gaps[2], 20*time.Second) {
			t.Fatalf("a's ejections = %v, want 5 s, 10 s, 20 s (less a tenth at most)", gaps)
		}
		a.set(false)
		traffic(p, 6*time.Minute)
		a.set(true)
		again := time.Now()
		traffic(p, 70*time.Second) // the clean calls of its window count until it rolls
		if gaps := a.outs(again); len(gaps) == 0 || !within(gaps[0], 5*time.Second) {
			t.Errorf("after clean minutes, a's ejection = %v, want 5 s again", gaps)
		}
	})
}

// When every deployment fails together (a provider-wide outage) none is
// an outlier: none is ejected, every one is still called (#73).
func TestAnOutageEjectsNone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fs []*flapper
		var ds []pool.Deployment
		for _, n := range []string{"a", "b", "c"} {
			f := &flapper{failing: true}
			fs = append(fs, f)
			ds = append(ds, pool.Deployment{Name: n, Runnable: f})
		}
		p := newPool(t, ds)
		start := time.Now()
		traffic(p, time.Minute)
		for i, f := range fs {
			if gaps := f.outs(start); len(gaps) != 0 {
				t.Errorf("deployment %d ejected for %v in an outage of all, want never", i, gaps)
			}
		}
	})
}

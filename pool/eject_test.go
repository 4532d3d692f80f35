package pool_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/pool"
)

// flapper is a deployment that fails while failing is set (with err, or
// a 503), or fails of every 5 calls those whose turn is in share, and
// notes when it was called.
type flapper struct {
	mu      sync.Mutex
	failing bool
	err     error
	share   int // of every 5 calls, the first share fail
	calls   []time.Time
}

func (f *flapper) set(failing bool) { f.mu.Lock(); f.failing = failing; f.mu.Unlock() }

func (f *flapper) Invoke(context.Context, any, ...core.Option) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, time.Now())
	if f.failing && f.err != nil {
		return nil, f.err
	}
	if f.failing || (len(f.calls)-1)%5 < f.share {
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

// callsSince returns f's calls after since.
func (f *flapper) callsSince(since time.Time) []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, _ := slices.BinarySearchFunc(f.calls, since, time.Time.Compare)
	return slices.Clone(f.calls[i:])
}

// outs returns the gaps over 4.4 s between f's calls: its ejections (the
// shortest is 5 s less a tenth; a deployment the choice passes over for a
// few seconds, its speed score poor, is not out).
func (f *flapper) outs(since time.Time) []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var gaps []time.Duration
	for i := 1; i < len(f.calls); i++ {
		if f.calls[i].After(since) {
			if g := f.calls[i].Sub(f.calls[i-1]); g > 4400*time.Millisecond {
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

// A server's hint always takes its deployment out, as a dead key does;
// when that puts more than the share out (one of three), an ejected
// deployment comes back at once rather than leave one deployment to
// serve: an ejection is the pool's guess, the hint the server's word
// (#73). Without it, a pool of
// three in bench/cmd/deployments lost 14 % of its calls in one run of
// three: a busy deployment ejected at the start, then a 429 on another.
func TestAHintBringsAnEjectedDeploymentBack(t *testing.T) {
	for _, out := range []error{throttled(10 * time.Second), &mock.HTTPError{Code: 401}} {
		aHintBringsAnEjectedDeploymentBack(t, out)
	}
}

// aHintBringsAnEjectedDeploymentBack ejects b, then has a fail with out
// (a hint, or a dead key), and wants b back at once.
func aHintBringsAnEjectedDeploymentBack(t *testing.T, out error) {
	synctest.Test(t, func(t *testing.T) {
		a, b, c := &flapper{err: out}, &flapper{failing: true}, &flapper{}
		p := newPool(t, []pool.Deployment{{Name: "a", Runnable: a}, {Name: "b", Runnable: b}, {Name: "c", Runnable: c}},
			pool.WithCooldown(3, time.Minute, time.Minute))
		traffic(p, 10*time.Second) // b is ejected, for a minute less a tenth at most
		b.set(false)
		if calls := b.callsSince(time.Now().Add(-2 * time.Second)); len(calls) != 0 {
			t.Fatalf("b called %d times in the last 2 s, want it ejected", len(calls))
		}
		a.set(true)
		hinted := time.Now()
		traffic(p, 2*time.Second)
		if n := len(a.callsSince(hinted)); n != 1 {
			t.Errorf("%v: a called %d times after it, want 1: held out", out, n)
		}
		if n := len(b.callsSince(hinted)); n == 0 {
			t.Errorf("%v on a: b not called within 2 s, want it back beside c, not out for its minute", out)
		}
	})
}

// A deployment that fails every call beside peers that fail 3 in 5 (none
// of them healthy) is an outlier all the same, once its calls say so
// beyond chance: the upper bound of its success rate falls under the
// lower bound of theirs. The peers are not (#73).
func TestADeploymentWorseThanItsPeersIsEjected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b, c, d := &flapper{failing: true}, &flapper{share: 3}, &flapper{share: 3}, &flapper{share: 3}
		p := newPool(t, []pool.Deployment{{Name: "a", Runnable: a}, {Name: "b", Runnable: b}, {Name: "c", Runnable: c}, {Name: "d", Runnable: d}})
		start := time.Now()
		traffic(p, 50*time.Second)
		if gaps := a.outs(start); len(gaps) == 0 {
			t.Errorf("a, failing every call, never ejected beside peers failing 3 in 5")
		}
		for i, f := range []*flapper{b, c, d} {
			if gaps := f.outs(start); len(gaps) != 0 {
				t.Errorf("peer %d, failing 3 in 5 as the others do, ejected for %v", i, gaps)
			}
		}
	})
}

package steadfast_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/hedge"
	"github.com/steadfast-go/steadfast/internal/race"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/internal/warmup"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
)

// openStreams is how many streams the scale tests hold open at once:
// STEADFAST_SCALE_STREAMS when set (.ci/run sets a busy service's 50 000,
// without -race), else 1000. The race detector allows 8128 goroutines
// alive at once, and each stream has several, so under -race it is 1000
// whatever is set.
func openStreams() int {
	if n, err := strconv.Atoi(os.Getenv("STEADFAST_SCALE_STREAMS")); err == nil && n > 0 && !race.Enabled {
		return n
	}
	return 1000
}

// breaksOnce is a stateless core.Resumer of chunks 1..n whose every
// Stream breaks after its first chunk with io.ErrUnexpectedEOF, and whose
// Resume continues after the chunk it is given. It keeps no per-stream
// state, so that what the scale tests measure is the decorators' memory.
type breaksOnce struct {
	n                int
	streams, resumes atomic.Int64
	// states, when set, gets a weak pointer to the core.State of each
	// call that opens a stream, to check that it ends with the call.
	states *weakStates
}

// weakStates holds weak pointers to the states of calls; its slice is
// made before the calls so that it is not part of what they allocate.
type weakStates struct {
	next atomic.Int64
	ptrs []weak.Pointer[core.State]
}

// live counts the states not yet collected.
func (w *weakStates) live() (n int) {
	for _, p := range w.ptrs[:min(int(w.next.Load()), len(w.ptrs))] {
		if p.Value() != nil {
			n++
		}
	}
	return n
}

func (b *breaksOnce) Invoke(context.Context, any, ...core.Option) (any, error) { return b.n, nil }

func (b *breaksOnce) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(b.Invoke).Batch(ctx, in, opts...)
}

func (b *breaksOnce) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	b.streams.Add(1)
	if w := b.states; w != nil {
		if i := w.next.Add(1) - 1; i < int64(len(w.ptrs)) {
			w.ptrs[i] = weak.Make(core.StateFrom(ctx))
		}
	}
	return b.from(ctx, 1, true), nil
}

func (b *breaksOnce) Resume(ctx context.Context, _ any, last any, _ ...core.Option) (<-chan any, error) {
	b.resumes.Add(1)
	n, ok := last.(int)
	if !ok {
		return nil, fmt.Errorf("breaksOnce: last = %v: %w", last, streams.ErrNotResumable)
	}
	return b.from(ctx, n+1, false), nil
}

// CanResume reports true: every stream of it resumes.
func (b *breaksOnce) CanResume(context.Context) bool { return true }

func (b *breaksOnce) from(ctx context.Context, first int, breakAfterFirst bool) <-chan any {
	ch := make(chan any)
	go func() {
		defer close(ch)
		for i := first; i <= b.n; i++ {
			if !streams.Send(ctx, ch, i) {
				return
			}
			if breakAfterFirst {
				streams.Send(ctx, ch, io.ErrUnexpectedEOF)
				return
			}
		}
	}()
	return ch
}

// Streams held open at once, far more than any fixed-size memory of calls
// (the 4096 of the ring the decorators used to keep), each breaking once
// after its first chunk, resume through every decorator over several
// Runnables: every chunk is delivered exactly once. What the decorators
// remember of a call goes with it: with the chain still alive, the heap
// comes back to where it was before the calls.
func TestEveryStreamResumesAtScale(t *testing.T) {
	const chunks = 3
	chains := map[string]func(a, b core.Runnable) core.Runnable{
		"fallback": func(a, b core.Runnable) core.Runnable {
			f, err := fallback.New([]core.Runnable{a, b})
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
		"pool": func(a, b core.Runnable) core.Runnable {
			p, err := pool.New([]pool.Deployment{{Name: "a", Runnable: a}, {Name: "b", Runnable: b}})
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
		"hedge with an alternate": func(a, b core.Runnable) core.Runnable {
			h, err := hedge.New(a, hedge.Config{Delay: time.Hour, MaxHedges: 1}, hedge.WithAlternates(b))
			if err != nil {
				t.Fatal(err)
			}
			return h
		},
	}
	for name, build := range chains {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := openStreams()
				a, b := &breaksOnce{n: chunks}, &breaksOnce{n: chunks}
				cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Second, ResumeStreams: true}
				r, err := retry.New(build(a, b), cfg, quiet...)
				if err != nil {
					t.Fatal(err)
				}
				// A small round warms up the chain; plain goroutines then
				// take the runtime past the peak of the measured round
				// (internal/warmup), for a fraction of a round's cost.
				warm, base := max(n/50, 100), runtime.NumGoroutine()
				_, alive := streamAtScale(t, r, warm, chunks)
				synctest.Wait()
				warmup.ForCalls(n, warm, base, alive)
				states := &weakStates{ptrs: make([]weak.Pointer[core.State], n)}
				a.states, b.states = states, states
				before := warmup.Heap()
				peak, _ := streamAtScale(t, r, n, chunks)
				synctest.Wait()
				after := warmup.Heap()
				if states.next.Load() < int64(n) {
					t.Fatalf("%d states seen, want one per stream, %d", states.next.Load(), n)
				}
				if live := states.live(); live > 0 {
					t.Errorf("%d of %d calls' states are still alive after the calls ended", live, n)
				}
				if got, want := a.resumes.Load()+b.resumes.Load(), int64(warm+n); got != want {
					t.Errorf("resumes = %d, want one per stream, %d", got, want)
				}
				t.Logf("%d streams: heap %d KiB before, %d KiB with all open, %d KiB after", n, before>>10, peak>>10, after>>10)
				if grown := int64(after) - int64(before); grown > 4<<20 {
					t.Errorf("heap after %d streams ended = %d KiB, %d KiB over before them: per-call state outlived its calls", n, after>>10, grown>>10)
				}
				runtime.KeepAlive(r)
			})
		})
	}
}

// streamAtScale opens n streams of r at once, holds every one open until
// all have delivered their first chunk, then reads them to their end,
// checking that each delivers 1..chunks exactly once; it returns the heap
// and the goroutines alive while all were open.
func streamAtScale(t *testing.T, r core.Runnable, n, chunks int) (peak uint64, alive int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var firsts, done sync.WaitGroup
	firsts.Add(n)
	done.Add(n)
	var bad atomic.Int64
	for i := range n {
		go func() {
			defer done.Done()
			ch, err := r.Stream(ctx, i)
			if err != nil {
				firsts.Done()
				bad.Add(1)
				return
			}
			next, want, first := 1, chunks, true
			for v := range ch {
				if got, ok := v.(int); !ok || got != next {
					bad.Add(1)
				}
				next++
				if first {
					first = false
					firsts.Done()
					firsts.Wait() // every stream is open now
				}
			}
			if first {
				firsts.Done()
			}
			if next != want+1 {
				bad.Add(1)
			}
		}()
	}
	firsts.Wait()
	alive = runtime.NumGoroutine()
	peak = warmup.Heap()
	done.Wait()
	if b := bad.Load(); b > 0 {
		t.Errorf("%d of %d streams did not deliver 1..%d exactly once", b, n, chunks)
	}
	return peak, alive
}

package core_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/core"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBatchRespectsMaxConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var running, peak atomic.Int32
		f := core.RunnableFunc(func(_ context.Context, in any, _ ...core.Option) (any, error) {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(time.Second)
			running.Add(-1)
			return in, nil
		})
		inputs := make([]any, 10)
		for i := range inputs {
			inputs[i] = i
		}
		start := time.Now()
		outs, err := f.Batch(t.Context(), inputs, core.WithMaxConcurrency(3))
		if err != nil {
			t.Fatal(err)
		}
		for i, out := range outs {
			if out != i {
				t.Errorf("outs[%d] = %v, want %d", i, out, i)
			}
		}
		if got := peak.Load(); got != 3 {
			t.Errorf("peak concurrency = %d, want 3", got)
		}
		if got, want := time.Since(start), 4*time.Second; got != want {
			t.Errorf("took %v, want %v", got, want)
		}
	})
}

func TestBatchEmpty(t *testing.T) {
	outs, err := core.RunnableFunc(nil).Batch(t.Context(), nil)
	if err != nil || len(outs) != 0 {
		t.Errorf("Batch(nil) = %v, %v, want [], nil", outs, err)
	}
}

func TestBatchErrorUnwrap(t *testing.T) {
	target := errors.New("boom")
	be := &core.BatchError{Errs: []error{nil, target, nil}}
	if !errors.Is(be, target) {
		t.Error("errors.Is(BatchError, item error) = false, want true")
	}
	if got, want := be.Error(), "batch: 1 of 3 items failed; item 1: boom"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestStreamStopsWhenContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		f := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "x", nil })
		ch, err := f.Stream(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		cancel() // the consumer walks away without reading
		synctest.Wait()
		for range ch { // closed without blocking; at most the one value
		}
	})
}

func TestStreamYieldsError(t *testing.T) {
	boom := errors.New("boom")
	f := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return nil, boom })
	ch, _ := f.Stream(t.Context(), nil)
	var got []any
	for v := range ch {
		got = append(got, v)
	}
	if len(got) != 1 || got[0] != boom {
		t.Errorf("chunks = %v, want [boom]", got)
	}
}

func TestLookupAndMaxConcurrency(t *testing.T) {
	if got := core.OperationFrom(core.WithOperation("a"), core.WithMaxConcurrency(2), core.WithOperation("b")); got != "b" {
		t.Errorf("OperationFrom() = %q, want the last one, b", got)
	}
	if _, ok := core.Lookup[int]([]core.Option{core.WithOperation("a")}, struct{}{}); ok {
		t.Error("Lookup(absent key) ok = true, want false")
	}
}

func TestChainSkipsNil(t *testing.T) {
	echo := core.RunnableFunc(func(_ context.Context, in any, _ ...core.Option) (any, error) { return in, nil })
	out, err := core.Chain(echo, nil).Invoke(t.Context(), 1)
	if err != nil || out != 1 {
		t.Errorf("Chain(r, nil).Invoke() = %v, %v, want 1, nil", out, err)
	}
}

type namedIdem struct {
	core.RunnableFunc
	idem bool
}

func (namedIdem) Name() string       { return "tool" }
func (n namedIdem) Idempotent() bool { return n.idem }

func TestNameOfAndIsIdempotent(t *testing.T) {
	var plain core.Runnable = core.RunnableFunc(nil)
	if core.NameOf(plain) != "" || !core.IsIdempotent(plain) {
		t.Error("a plain Runnable: want no name and idempotent")
	}
	r := namedIdem{idem: false}
	if core.NameOf(r) != "tool" || core.IsIdempotent(r) {
		t.Error("namedIdem: want name tool and not idempotent")
	}
}

// wrapper decorates a Runnable without changing its meaning.
type wrapper struct{ core.Runnable }

func (w wrapper) Unwrap() core.Runnable { return w.Runnable }

// unsafeWrapper changes what Idempotent means, so it says so itself.
type unsafeWrapper struct{ wrapper }

func (unsafeWrapper) Idempotent() bool { return false }

func TestFindFollowsUnwrap(t *testing.T) {
	inner := namedIdem{idem: true}
	r := wrapper{wrapper{inner}}
	if got := core.NameOf(r); got != "tool" {
		t.Errorf("NameOf(wrapped) = %q, want the inner name, tool", got)
	}
	if !core.IsIdempotent(r) {
		t.Error("IsIdempotent(wrapped idempotent) = false, want true")
	}
	if core.IsIdempotent(unsafeWrapper{wrapper{inner}}) {
		t.Error("IsIdempotent stopped past a decorator that answers itself")
	}
	if n, ok := core.Find[core.Named](r); !ok {
		t.Error("Find[Named](wrapped) ok = false, want the inner Runnable")
	} else if _, isInner := n.(namedIdem); !isInner {
		t.Errorf("Find[Named](wrapped) = %T, want the inner namedIdem", n)
	}
	if _, ok := core.Find[core.Named](wrapper{core.RunnableFunc(nil)}); ok {
		t.Error("Find[Named] found a name where no Runnable of the chain has one")
	}
	if _, ok := core.Find[core.Named](nil); ok {
		t.Error("Find[Named](nil) ok = true, want false")
	}
}

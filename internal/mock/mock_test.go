package mock_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errBoom = errors.New("errBoom")

func TestInvokeFollowsScriptThenRepeatsLast(t *testing.T) {
	r := mock.New(mock.Fail(errBoom), mock.OK("a"))
	for i, want := range []any{nil, "a", "a"} {
		out, err := r.Invoke(t.Context(), i)
		if out != want || (i == 0) != (err != nil) {
			t.Errorf("call %d: Invoke() = %v, %v, want %v", i, out, err, want)
		}
	}
	if got := r.CallCount(); got != 3 {
		t.Errorf("CallCount() = %d, want 3", got)
	}
	if got := r.Calls()[1].Input; got != 1 {
		t.Errorf("Calls()[1].Input = %v, want 1", got)
	}
}

func TestBatchPerInputScripts(t *testing.T) {
	r := mock.New().ForInput("b", mock.Fail(errBoom), mock.OK("B")).FailBatch(errBoom)
	if _, err := r.Batch(t.Context(), []any{"a", "b"}); !errors.Is(err, errBoom) {
		t.Fatalf("first Batch() error = %v, want errBoom", err)
	}
	outs, err := r.Batch(t.Context(), []any{"a", "b"})
	be, ok := errors.AsType[*core.BatchError](err)
	if !ok || be.Errs[0] != nil || be.Errs[1] != errBoom || outs[0] != "a" {
		t.Fatalf("second Batch() = %v, %v, want item b failed", outs, err)
	}
	outs, err = r.Batch(t.Context(), []any{"b"})
	if err != nil || outs[0] != "B" {
		t.Errorf("third Batch() = %v, %v, want [B]", outs, err)
	}
}

func TestStreamChunksThenError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := mock.New(mock.Fail(errBoom), mock.Stream(errBoom, "x", "y"))
		if _, err := r.Stream(t.Context(), nil); err != errBoom {
			t.Fatalf("first Stream() error = %v, want errBoom", err)
		}
		ch, _ := r.Stream(t.Context(), nil)
		var got []any
		for v := range ch {
			got = append(got, v)
		}
		if len(got) != 3 || got[0] != "x" || got[1] != "y" || got[2] != errBoom {
			t.Errorf("chunks = %v, want [x y errBoom]", got)
		}
	})
}

func TestStreamStopsOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		r := mock.New(mock.Result{Chunks: []any{1, 2, 3}, ChunkDelay: time.Second})
		ch, _ := r.Stream(ctx, nil)
		<-ch
		cancel()
		for range ch {
		}
	})
}

func TestWrappers(t *testing.T) {
	var r core.Runnable = mock.Named("llm", mock.NonIdempotent(mock.New()))
	if n, ok := r.(core.Named); !ok || n.Name() != "llm" {
		t.Error("Named: Name() missing or wrong")
	}
	if i, ok := core.Runnable(mock.NonIdempotent(mock.New())).(core.Idempotency); !ok || i.Idempotent() {
		t.Error("NonIdempotent: Idempotent() missing or true")
	}
}

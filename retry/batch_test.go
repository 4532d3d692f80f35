package retry_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

func batchInputs(n int) []any {
	in := make([]any, n)
	for i := range in {
		in[i] = i
	}
	return in
}

// sentPerCall returns the inputs of each inner Batch call.
func sentPerCall(inner *mock.Runnable) [][]any {
	var sent [][]any
	for _, c := range inner.Calls() {
		sent = append(sent, c.Inputs)
	}
	return sent
}

func TestBatchRetriesOnlyFailedItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New().
			ForInput(1, mock.Fail(errTransient), mock.OK("one")).
			ForInput(3, mock.Fail(errTransient), mock.Fail(errTransient), mock.OK("three"))
		r := newRetry(t, inner, testConfig())
		start := time.Now()
		outs, err := r.Batch(t.Context(), batchInputs(5))
		if err != nil {
			t.Fatalf("Batch() error = %v", err)
		}
		if want := []any{0, "one", 2, "three", 4}; !slices.Equal(outs, want) {
			t.Errorf("outputs = %v, want %v", outs, want)
		}
		want := [][]any{{0, 1, 2, 3, 4}, {1, 3}, {3}}
		if got := sentPerCall(inner); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("sent = %v, want %v", got, want)
		}
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("took %v, want 3s (1s + 2s)", got)
		}
	})
}

func TestBatchPermanentAndExhaustedItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New().
			ForInput(0, mock.Fail(&mock.HTTPError{Code: 400})).
			ForInput(2, mock.Fail(errTransient))
		r := newRetry(t, inner, testConfig())
		outs, err := r.Batch(t.Context(), batchInputs(3), core.WithOperation("retriever"))
		be, ok := errors.AsType[*core.BatchError](err)
		if !ok {
			t.Fatalf("Batch() error = %v, want a *core.BatchError", err)
		}
		if outs[0] != nil || outs[1] != 1 || outs[2] != nil {
			t.Errorf("outputs = %v, want [nil 1 nil]", outs)
		}
		if be.Errs[1] != nil {
			t.Errorf("Errs[1] = %v, want nil", be.Errs[1])
		}
		wantOutcome(t, be.Errs[0], retry.OutcomeNotRetryable, 1)
		e2 := wantOutcome(t, be.Errs[2], retry.OutcomeExhausted, 4)
		if !errors.Is(e2, errTransient) || e2.Operation != "retriever" {
			t.Errorf("Errs[2] = %v, want the transient error and the operation", e2)
		}
		// Item 0 was sent once, item 2 four times, item 1 once.
		want := [][]any{{0, 1, 2}, {2}, {2}, {2}}
		if got := sentPerCall(inner); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("sent = %v, want %v", got, want)
		}
	})
}

func TestBatchEveryItemFailsPermanently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Fail(retry.Permanent(errTransient)))
		r := newRetry(t, inner, testConfig())
		outs, err := r.Batch(t.Context(), batchInputs(3))
		be, ok := errors.AsType[*core.BatchError](err)
		if !ok || len(outs) != 3 || len(be.Errs) != 3 {
			t.Fatalf("Batch() = %v, %v, want 3 outputs and a 3-item BatchError", outs, err)
		}
		for i, e := range be.Errs {
			wantOutcome(t, e, retry.OutcomeNotRetryable, 1)
			if outs[i] != nil {
				t.Errorf("outs[%d] = %v, want nil", i, outs[i])
			}
		}
		if inner.CallCount() != 1 {
			t.Errorf("inner Batch calls = %d, want 1", inner.CallCount())
		}
	})
}

func TestBatchWholeFailureRetriesAllPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New().FailBatch(&mock.HTTPError{Code: 503}, &mock.HTTPError{Code: 503})
		r := newRetry(t, inner, testConfig())
		outs, err := r.Batch(t.Context(), batchInputs(2))
		if err != nil || !slices.Equal(outs, []any{0, 1}) {
			t.Fatalf("Batch() = %v, %v, want [0 1], nil", outs, err)
		}
		if got := inner.CallCount(); got != 3 {
			t.Errorf("inner Batch calls = %d, want 3", got)
		}
		// A permanent whole-batch error ends every item.
		inner = mock.New().FailBatch(&mock.HTTPError{Code: 401})
		_, err = newRetry(t, inner, testConfig()).Batch(t.Context(), batchInputs(2))
		be, _ := errors.AsType[*core.BatchError](err)
		if be == nil || be.Errs[0] == nil || be.Errs[1] == nil || inner.CallCount() != 1 {
			t.Errorf("Batch() error = %v after %d calls, want both items failed after 1 call", err, inner.CallCount())
		}
	})
}

func TestBatchEmpty(t *testing.T) {
	inner := mock.New()
	outs, err := newRetry(t, inner, testConfig()).Batch(t.Context(), nil)
	if err != nil || outs == nil || len(outs) != 0 {
		t.Errorf("Batch(nil) = %#v, %v, want an empty slice and nil", outs, err)
	}
	if inner.CallCount() != 0 {
		t.Errorf("inner calls = %d, want 0", inner.CallCount())
	}
}

func TestBatchWrongOutputLength(t *testing.T) {
	inner := batchOnly(func(_ context.Context, inputs []any) ([]any, error) {
		return inputs[:1], nil
	})
	r := newRetry(t, inner, testConfig())
	outs, err := r.Batch(t.Context(), batchInputs(3))
	be, ok := errors.AsType[*core.BatchError](err)
	if !ok || len(outs) != 3 {
		t.Fatalf("Batch() = %v, %v, want 3 outputs and a *core.BatchError", outs, err)
	}
	for _, e := range be.Errs {
		re := wantOutcome(t, e, retry.OutcomeNotRetryable, 1)
		if re.Err == nil {
			t.Error("item error has no cause")
		}
	}
}

func TestBatchCancelBetweenRounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		inner := mock.New().ForInput(1, mock.Fail(errTransient))
		r := newRetry(t, inner, testConfig(), retry.WithOnRetry(func(context.Context, retry.RetryEvent) {
			time.AfterFunc(100*time.Millisecond, cancel)
		}))
		outs, err := r.Batch(ctx, batchInputs(3))
		be, ok := errors.AsType[*core.BatchError](err)
		if !ok {
			t.Fatalf("Batch() error = %v, want a *core.BatchError", err)
		}
		if outs[0] != 0 || outs[2] != 2 || outs[1] != nil {
			t.Errorf("outputs = %v, want finished items kept: [0 nil 2]", outs)
		}
		e := wantOutcome(t, be.Errs[1], retry.OutcomeCanceled, 1)
		if !errors.Is(e, context.Canceled) || be.Errs[0] != nil || be.Errs[2] != nil {
			t.Errorf("Errs = %v, want only item 1 failed, with context.Canceled", be.Errs)
		}
	})
}

func TestBatchNonIdempotentNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New().ForInput(0, mock.Fail(errTransient), mock.OK("sent"))
		r := newRetry(t, mock.NonIdempotent(inner), testConfig())
		_, err := r.Batch(t.Context(), batchInputs(2))
		be, _ := errors.AsType[*core.BatchError](err)
		if be == nil || inner.CallCount() != 1 {
			t.Fatalf("Batch() error = %v after %d calls, want a failure after 1 call", err, inner.CallCount())
		}
		wantOutcome(t, be.Errs[0], retry.OutcomeNotRetryable, 1)
	})
}

// batchOnly is a Runnable whose Batch is f and whose other methods fail.
type batchOnly func(ctx context.Context, inputs []any) ([]any, error)

func (f batchOnly) Invoke(context.Context, any, ...core.Option) (any, error) {
	return nil, errors.New("not implemented")
}
func (f batchOnly) Batch(ctx context.Context, inputs []any, _ ...core.Option) ([]any, error) {
	return f(ctx, inputs)
}
func (f batchOnly) Stream(context.Context, any, ...core.Option) (<-chan any, error) {
	return nil, errors.New("not implemented")
}

func TestRunnableFuncBatchUnderRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		attempts := map[any]int{}
		var mu sync.Mutex
		f := core.RunnableFunc(func(_ context.Context, in any, _ ...core.Option) (any, error) {
			mu.Lock()
			attempts[in]++
			n := attempts[in]
			mu.Unlock()
			if in.(int)%2 == 1 && n == 1 {
				return nil, errTransient
			}
			return in, nil
		})
		outs, err := newRetry(t, f, testConfig()).Batch(t.Context(), batchInputs(6), core.WithMaxConcurrency(2))
		if err != nil || !slices.Equal(outs, batchInputs(6)) {
			t.Fatalf("Batch() = %v, %v", outs, err)
		}
		for in, n := range attempts {
			if want := 1 + in.(int)%2; n != want {
				t.Errorf("item %v attempts = %d, want %d", in, n, want)
			}
		}
	})
}

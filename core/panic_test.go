package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/errproto"
)

var errBoom = errors.New("boom")

func panicky(_ context.Context, in any, _ ...core.Option) (any, error) {
	if in == "panic" {
		panic(errBoom)
	}
	return in, nil
}

// A RunnableFunc's Batch runs items on goroutines of its own: a panic there
// becomes the item's error, and the other items keep their outputs.
func TestBatchItemPanicBecomesItsError(t *testing.T) {
	outs, err := core.RunnableFunc(panicky).Batch(t.Context(), []any{"a", "panic", "c"})
	be, ok := errors.AsType[*core.BatchError](err)
	if !ok || len(be.Errs) != 3 {
		t.Fatalf("Batch() error = %v, want a *BatchError of 3", err)
	}
	pe, ok := errors.AsType[*core.PanicError](be.Errs[1])
	if !ok || pe.Value != errBoom || !errors.Is(err, errBoom) {
		t.Fatalf("item 1 error = %v, want a *PanicError of errBoom", be.Errs[1])
	}
	if !strings.Contains(string(pe.Stack), "panicky") {
		t.Errorf("stack does not show the panicking function:\n%s", pe.Stack)
	}
	if be.Errs[0] != nil || be.Errs[2] != nil || outs[0] != "a" || outs[2] != "c" {
		t.Errorf("outs, errs = %v, %v, want the other items intact", outs, be.Errs)
	}
}

func TestStreamPanicIsTheLastValue(t *testing.T) {
	ch, err := core.RunnableFunc(panicky).Stream(t.Context(), "panic")
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	for v := range ch {
		got = append(got, v)
	}
	if len(got) != 1 {
		t.Fatalf("values = %v, want one", got)
	}
	pe, ok := got[0].(*core.PanicError)
	if !ok || pe.Value != errBoom || pe.Retryable() || pe.ErrorType() != "panic" || pe.Error() != "panic: boom" {
		t.Errorf("value = %#v, want a non-retryable *PanicError of errBoom", got[0])
	}
}

func TestNilBatchErrorIsSafe(t *testing.T) {
	var be *core.BatchError
	if be.Unwrap() != nil || be.Error() == "" {
		t.Errorf("nil *BatchError: Unwrap, Error = %v, %q", be.Unwrap(), be.Error())
	}
}

type localErr struct{ local bool }

func (e localErr) Error() string { return "refused" }
func (e localErr) Local() bool   { return e.local }

func TestIsLocal(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errBoom, false},
		{localErr{true}, true},
		{localErr{false}, false},
		{errors.Join(errBoom, localErr{true}), true},
	} {
		if got := errproto.Local(tc.err); got != tc.want {
			t.Errorf("IsLocal(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

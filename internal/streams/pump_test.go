package streams

import (
	"context"
	"errors"
	"testing"
)

func feed(values ...any) <-chan any {
	ch := make(chan any, len(values))
	for _, v := range values {
		ch <- v
	}
	close(ch)
	return ch
}

func TestPumpEnds(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name   string
		in     []any
		limit  int
		want   Result
		values int
	}{
		{"completed", []any{1, 2}, 0, Result{End: Completed, Chunks: 2}, 2},
		{"failed", []any{1, boom, 3}, 0, Result{End: Failed, Err: boom, Delivered: true, Chunks: 1}, 2},
		{"limited", []any{1, 2, 3}, 2, Result{End: Completed, Chunks: 2}, 2},
	} {
		out := make(chan any, 4)
		seen := 0
		got := Pump(t.Context(), feed(tc.in...), out, PumpConfig{Seen: func(any) { seen++ }, Limit: tc.limit})
		if got != tc.want || len(out) != tc.values || seen != tc.want.Chunks {
			t.Errorf("%s: Pump() = %+v with %d values, %d seen; want %+v with %d", tc.name, got, len(out), seen, tc.want, tc.values)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if got := Pump(ctx, make(chan any), make(chan any), PumpConfig{}); got.End != Canceled {
		t.Errorf("Pump() with a done context = %+v, want Canceled", got)
	}
}

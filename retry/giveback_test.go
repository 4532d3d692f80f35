package retry_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

// givingBudget grants every retry and counts the turns given back.
type givingBudget struct {
	mu                 sync.Mutex
	reserved, returned int
}

func (b *givingBudget) Reserve(_ context.Context, n int, _ time.Duration) core.Reservation {
	if n <= 1 {
		return core.Reservation{OK: true}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reserved++
	return core.Reservation{OK: true, Cancel: func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.returned++
	}}
}

func (b *givingBudget) RecordAttempt(context.Context, int, bool) {}

func (b *givingBudget) counts() (reserved, returned int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reserved, b.returned
}

// A retry the budget granted but that is never made, because the caller
// gave up during its backoff or the call was handed off, gives its turn
// back; a retry made keeps it. A Batch that failed whole took one turn
// for the round, and gives back that one.
func TestRetryNotMadeGivesItsTurnBack(t *testing.T) {
	for name, tc := range map[string]struct {
		batch        bool // a Batch of three, else an Invoke
		handOff      time.Duration
		cancelAt     time.Duration // 0: never
		wantReserved int
		wantReturned int
	}{
		"a retry made": {wantReserved: 1},
		"the caller gives up in the backoff": {
			cancelAt: 500 * time.Millisecond, wantReserved: 1, wantReturned: 1,
		},
		"handed off": {
			handOff: 100 * time.Millisecond, wantReserved: 1, wantReturned: 1,
		},
		"a Batch failed whole, the caller gives up": {
			batch: true, cancelAt: 500 * time.Millisecond, wantReserved: 1, wantReturned: 1,
		},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := mock.New(mock.Fail(&mock.HTTPError{Code: 503}), mock.OK("answer")).
					FailBatch(&mock.HTTPError{Code: 503})
				b := &givingBudget{}
				r := newRetry(t, inner, testConfig(), retry.WithBudget(b))
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.cancelAt > 0 {
					time.AfterFunc(tc.cancelAt, cancel)
				}
				if tc.handOff > 0 {
					ctx = retry.WithContinuation(ctx, retry.Continuation{HandOff: tc.handOff})
				}
				var err error
				if tc.batch {
					_, err = r.Batch(ctx, batchInputs(3))
				} else {
					_, err = r.Invoke(ctx, "q")
				}
				if wantErr := tc.wantReturned > 0; (err != nil) != wantErr {
					t.Fatalf("err = %v, want an error: %v", err, wantErr)
				}
				if reserved, returned := b.counts(); reserved != tc.wantReserved || returned != tc.wantReturned {
					t.Errorf("turns reserved %d, given back %d; want %d, %d", reserved, returned, tc.wantReserved, tc.wantReturned)
				}
			})
		})
	}
}

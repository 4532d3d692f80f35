package room_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/internal/room"
)

// Await sleeps what next asks until it says go, and refuses at once, with
// no sleep, a wait past the layer's bound or the caller's deadline.
func TestAwait(t *testing.T) {
	for name, tc := range map[string]struct {
		max, deadline time.Duration
		wantSlept     time.Duration
		wantErr       *room.TooLong
	}{
		"within the bound: two waits, then go": {max: time.Minute, wantSlept: 300 * time.Millisecond},
		"past the bound":                       {max: 250 * time.Millisecond, wantSlept: 100 * time.Millisecond, wantErr: &room.TooLong{Wait: 300 * time.Millisecond}},
		"past the deadline":                    {max: time.Minute, deadline: 250 * time.Millisecond, wantSlept: 100 * time.Millisecond, wantErr: &room.TooLong{Wait: 300 * time.Millisecond, Deadline: true}},
	} {
		synctest.Test(t, func(t *testing.T) {
			ctx := t.Context()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			waits := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}
			slept, err := room.Await(ctx, room.Bound{Max: tc.max}, func() room.Reservation {
				if len(waits) == 0 {
					return room.Go()
				}
				w := waits[0]
				waits = waits[1:]
				return room.After(w, true)
			})
			if slept != tc.wantSlept {
				t.Errorf("%s: slept %v, want %v", name, slept, tc.wantSlept)
			}
			tl, _ := errors.AsType[*room.TooLong](err)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Errorf("%s: err %v, want none", name, err)
			case tc.wantErr != nil && (tl == nil || *tl != *tc.wantErr):
				t.Errorf("%s: err %v (%+v), want %+v", name, err, tl, tc.wantErr)
			}
		})
	}
}

// A reservation that may never go is refused at once; a context that ends
// during a wait ends it with its cause.
func TestAwaitRefusesAndCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := room.Await(t.Context(), room.Bound{Max: time.Hour}, func() room.Reservation { return room.After(time.Second, false) })
		if _, ok := errors.AsType[*room.TooLong](err); !ok {
			t.Errorf("a reservation that may not go: err %v, want *TooLong", err)
		}
		cause := errors.New("gone")
		ctx, cancel := context.WithCancelCause(t.Context())
		time.AfterFunc(50*time.Millisecond, func() { cancel(cause) })
		_, err = room.Await(ctx, room.Bound{Max: time.Hour}, func() room.Reservation { return room.After(time.Second, true) })
		if !errors.Is(err, cause) {
			t.Errorf("cancelled during the wait: err %v, want its cause", err)
		}
	})
}

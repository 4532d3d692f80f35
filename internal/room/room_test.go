package room_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
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
			slept, err := room.Await(ctx, room.Bound{Max: tc.max}, func() core.Reservation {
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
		_, err := room.Await(t.Context(), room.Bound{Max: time.Hour}, func() core.Reservation { return room.After(time.Second, false) })
		if _, ok := errors.AsType[*room.TooLong](err); !ok {
			t.Errorf("a reservation that may not go: err %v, want *TooLong", err)
		}
		cause := errors.New("gone")
		ctx, cancel := context.WithCancelCause(t.Context())
		time.AfterFunc(50*time.Millisecond, func() { cancel(cause) })
		_, err = room.Await(ctx, room.Bound{Max: time.Hour}, func() core.Reservation { return room.After(time.Second, true) })
		if !errors.Is(err, cause) {
			t.Errorf("cancelled during the wait: err %v, want its cause", err)
		}
	})
}

// A reservation Await does not wait out, refused for its bound or cut
// short by the caller, is given back; one waited out is kept.
func TestAwaitCancelsWhatItDoesNotWaitOut(t *testing.T) {
	for name, tc := range map[string]struct {
		max        time.Duration
		cancelAt   time.Duration // 0: never
		wantCancel bool
	}{
		"waited out":      {max: time.Hour},
		"past the bound":  {max: time.Millisecond, wantCancel: true},
		"caller gives up": {max: time.Hour, cancelAt: 500 * time.Millisecond, wantCancel: true},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.cancelAt > 0 {
					time.AfterFunc(tc.cancelAt, cancel)
				}
				cancelled, asked := 0, 0
				_, _ = room.Await(ctx, room.Bound{Max: tc.max}, func() core.Reservation {
					if asked++; asked > 1 {
						return room.Go()
					}
					return core.Reservation{Delay: time.Second, OK: true, Cancel: func() { cancelled++ }}
				})
				if want := map[bool]int{false: 0, true: 1}[tc.wantCancel]; cancelled != want {
					t.Errorf("cancelled %d times, want %d", cancelled, want)
				}
			})
		})
	}
}

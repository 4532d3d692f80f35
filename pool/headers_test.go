package pool_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/pool"
)

// A deployment whose headers say it has no request left is passed over
// until their reset: the calls go to the other key, and none meets a 429
// while the keys together have room.
func TestHeadersSteerCallsToTheKeyWithRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := &mock.Windowed{Quota: 4, Window: time.Second}, &mock.Windowed{Quota: 4, Window: time.Second}
		p := newPool(t, []pool.Deployment{{Name: "a", Runnable: a}, {Name: "b", Runnable: b}})
		r := retried(t, p)
		for window := range 3 {
			for i := range 8 { // the two keys' quota, every window
				if _, err := r.Invoke(t.Context(), i); err != nil {
					t.Fatalf("window %d, call %d: %v", window, i, err)
				}
			}
			time.Sleep(time.Second)
		}
		aok, atoo := a.Counts()
		bok, btoo := b.Counts()
		if atoo+btoo != 0 || aok != 12 || bok != 12 {
			t.Errorf("ok %d and %d, 429s %d and %d; want 12 each and none", aok, bok, atoo, btoo)
		}

		// With both keys used up, the pool says until when, naming why.
		for range 8 {
			_, _ = p.Invoke(t.Context(), "q")
		}
		_, err := p.Invoke(t.Context(), "q")
		if ue, ok := err.(*pool.UnavailableError); !ok || ue.Wait <= 0 || ue.Deployments[0].Reason != "no requests left until its limits reset" {
			t.Errorf("both keys used up: Invoke() = %v, want a *pool.UnavailableError until the reset", err)
		}
		_, atoo = a.Counts()
		_, btoo = b.Counts()
		if atoo+btoo != 0 {
			t.Errorf("429s %d, want none: the pool did not send what the headers had no room for", atoo+btoo)
		}
	})
}

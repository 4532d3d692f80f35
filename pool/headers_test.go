package pool_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
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

		// With both keys used up, a call waits in the pool for the first
		// reset and goes then: no 429, nothing for a retry layer to do.
		for range 8 {
			_, _ = p.Invoke(t.Context(), "q")
		}
		start := time.Now()
		if _, err := p.Invoke(t.Context(), "q"); err != nil || time.Since(start) != time.Second {
			t.Errorf("both keys used up: Invoke() = %v after %v, want success at the reset, 1s later", err, time.Since(start))
		}
		_, atoo = a.Counts()
		_, btoo = b.Counts()
		if atoo+btoo != 0 {
			t.Errorf("429s %d, want none: the pool did not send what the headers had no room for", atoo+btoo)
		}
	})
}

// usedUp returns a pool of one key of quota calls a second whose headers
// say it has none left: the calls of the current second took them all.
func usedUp(t *testing.T, quota int, opts ...pool.Option) (*pool.Runnable, *mock.Windowed) {
	t.Helper()
	key := &mock.Windowed{Quota: quota, Window: time.Second}
	p := newPool(t, []pool.Deployment{{Name: "key", Runnable: key}}, opts...)
	for range quota {
		if _, err := p.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
	}
	return p, key
}

// A call that may not wait for the reset, past WithMaxWait or its
// deadline, is refused at once, naming why.
func TestAWaitPastItsBoundIsRefusedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for name, tc := range map[string]struct {
			opts     []pool.Option
			deadline time.Duration
		}{
			"WithMaxWait(0)":        {opts: []pool.Option{pool.WithMaxWait(0)}},
			"WithMaxWait(500ms)":    {opts: []pool.Option{pool.WithMaxWait(500 * time.Millisecond)}},
			"deadline before reset": {deadline: 999 * time.Millisecond},
		} {
			p, key := usedUp(t, 2, tc.opts...)
			ctx := t.Context()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			start := time.Now()
			_, err := p.Invoke(ctx, "q")
			ue, ok := errors.AsType[*pool.UnavailableError](err)
			if !ok || ue.Wait != time.Second || ue.Deployments[0].Reason != "no requests left until its limits reset" || time.Since(start) != 0 {
				t.Errorf("%s: Invoke() = %v after %v, want a *pool.UnavailableError at once, the reset 1s away", name, err, time.Since(start))
			}
			if _, too := key.Counts(); too != 0 {
				t.Errorf("%s: %d 429s, want none", name, too)
			}
			time.Sleep(time.Second) // the next case's window
		}
	})
}

// A caller that cancels while its call waits for a reset gets its
// cancellation at once; nothing is sent.
func TestACancelledWaitEndsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, key := usedUp(t, 2)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := p.Invoke(ctx, "q")
		if !errors.Is(err, context.Canceled) || time.Since(start) != 100*time.Millisecond {
			t.Errorf("Invoke() = %v after %v, want context.Canceled after 100ms", err, time.Since(start))
		}
		if ok, _ := key.Counts(); ok != 2 {
			t.Errorf("calls served = %d, want the 2 before: the cancelled call was not sent", ok)
		}
	})
}

// With one key revoked mid-run and the other with too few requests left
// for the calls that come, the calls wait for the live key's resets, each
// taking its turn: every call succeeds, none meets a 429, and no retry is
// spent, neither on the dead key nor on a wait.
func TestARevokedKeyAndAFullOneCostNoRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		live := &mock.Windowed{Quota: 4, Window: time.Second}
		revoked := mock.New(mock.Fail(&mock.HTTPError{Code: 401}))
		// The first call goes to the revoked key, dies there and goes on to
		// the live one: the pool knows both before the calls that count.
		// (Left to the pool's random choice, the revoked key could be
		// unknown yet when they come, and several of them sent to it.)
		learn := keyFor(t, "revoked", "revoked", "live")
		p := newPool(t, []pool.Deployment{{Name: "revoked", Runnable: revoked}, {Name: "live", Runnable: live}},
			pool.WithAffinity(func(_ context.Context, in any) string {
				if in == "learn" {
					return learn
				}
				return ""
			}))
		var retries atomic.Int64
		r := retried(t, p, retry.WithOnRetry(func(context.Context, retry.RetryEvent) { retries.Add(1) }))
		if _, err := r.Invoke(t.Context(), "learn"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := live.Counts(); ok != 1 || revoked.CallCount() != 1 {
			t.Fatalf("the first call: %d served by the live key, %d calls to the revoked one; want 1 and 1", ok, revoked.CallCount())
		}
		start := time.Now()
		var wg sync.WaitGroup
		var failed atomic.Int64
		for i := range 13 { // three windows and more of the live key's quota, at once
			wg.Go(func() {
				if _, err := r.Invoke(t.Context(), i); err != nil {
					failed.Add(1)
					t.Errorf("call %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		ok, too := live.Counts()
		if failed.Load() != 0 || too != 0 || ok != 14 || retries.Load() != 0 || revoked.CallCount() != 1 {
			t.Errorf("%d failed, %d served, %d 429s, %d retries, %d calls to the revoked key; want 0, 14, 0, 0, 1",
				failed.Load(), ok, too, retries.Load(), revoked.CallCount())
		}
		if took := time.Since(start); took != 3*time.Second {
			t.Errorf("the calls took %v, want 3s: 3 left in this window, 4 in each of the next three", took)
		}
	})
}

// Every item of a Batch is a request of the key's quota: the items the
// headers have no room for wait for the reset, and none meets a 429.
func TestABatchCountsEachItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, key := usedUp(t, 4)
		time.Sleep(time.Second) // a new window: 4 requests
		in := make([]any, 10)
		for i := range in {
			in[i] = i
		}
		start := time.Now()
		outs, err := p.Batch(t.Context(), in)
		if err != nil || len(outs) != 10 {
			t.Fatalf("Batch() = %d outputs, %v; want 10, nil", len(outs), err)
		}
		if ok, too := key.Counts(); too != 0 || ok != 14 || time.Since(start) != 2*time.Second {
			t.Errorf("%d served, %d 429s, after %v; want 14, none, 2s (4, 4 and 2 a window)", ok, too, time.Since(start))
		}
	})
}

// A stream waits for the reset as a call does.
func TestAStreamWaitsForTheReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, key := usedUp(t, 2)
		start := time.Now()
		ch, err := p.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		var got []any
		for v := range ch {
			got = append(got, v)
		}
		if len(got) != 1 || got[0] != "ok" || time.Since(start) != time.Second {
			t.Errorf("stream = %v after %v, want [ok] at the reset, 1s later", got, time.Since(start))
		}
		if _, too := key.Counts(); too != 0 {
			t.Errorf("%d 429s, want none", too)
		}
	})
}

// Through a retry layer, a call whose deadline comes before the reset ends
// at once: the pool refuses it, and the retry layer does not wait for a
// reset past the deadline either.
func TestAResetPastTheDeadlineEndsTheCallAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, key := usedUp(t, 2)
		var retries atomic.Int64
		r := retried(t, p, retry.WithOnRetry(func(context.Context, retry.RetryEvent) { retries.Add(1) }))
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := r.Invoke(ctx, "q")
		if _, ok := errors.AsType[*pool.UnavailableError](err); !ok || time.Since(start) != 0 || retries.Load() != 0 {
			t.Errorf("Invoke() = %v after %v and %d retries, want the pool's refusal at once", err, time.Since(start), retries.Load())
		}
		if ok, too := key.Counts(); ok != 2 || too != 0 {
			t.Errorf("%d served, %d 429s; want the 2 before, none", ok, too)
		}
	})
}

package steadfast_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// outageStats is what a run of outageRun saw.
type outageStats struct {
	attemptsInOutage, callsInOutage int32
	after, afterOK, canceled        int
}

// outageRun makes 1000 calls, 200 a second, through retry(chain(provider))
// with the recommended budget, where the provider fails every request from
// 1s to 3s (two windows of the throttle: a shorter outage is mostly its
// first second, before the throttle has counted it, and its attempts
// moved from 1.15 to 1.23 times its calls with goroutine order). Every
// tenth caller gives up after 50ms and every tenth, another, has a
// deadline of 20ms. It checks that every failure is a *retry.Error.
func outageRun(t *testing.T, chain func(core.Runnable) core.Runnable) outageStats {
	start := time.Now()
	const outageStart, outageEnd = time.Second, 3 * time.Second
	var st outageStats
	var attempts, calls atomic.Int32
	provider := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
		if at := time.Since(start); at >= outageStart && at < outageEnd {
			attempts.Add(1)
			return nil, &mock.HTTPError{Code: 503}
		}
		return "ok", nil
	})
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 80 * time.Millisecond, Jitter: 0.1}
	r, err := retry.New(chain(provider), cfg, append(quiet, retry.WithBudget(retry.RecommendedBudget()))...)
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for i := range 1000 {
		began := time.Since(start)
		if began >= outageStart && began < outageEnd {
			calls.Add(1)
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			switch i % 10 {
			case 3: // gives up soon, held or not
				time.AfterFunc(50*time.Millisecond, cancel)
			case 7: // a deadline nearer than any hold
				ctx, cancel = context.WithTimeout(ctx, 20*time.Millisecond)
				defer cancel()
			}
			_, err := r.Invoke(ctx, "q")
			if _, ok := errors.AsType[*retry.Error](err); err != nil && !ok {
				t.Errorf("Invoke() error = %v, want a *retry.Error", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(err, context.Canceled) {
				st.canceled++
			}
			if began >= outageEnd+500*time.Millisecond && i%10 != 3 {
				st.after++
				if err == nil {
					st.afterOK++
				}
			}
		})
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	st.attemptsInOutage, st.callsInOutage = attempts.Load(), calls.Load()
	t.Logf("%+v", st)
	return st
}

// The recommended budget over a limiter, under an outage, with callers that
// give up during their backoff and callers whose deadline is near: every
// call ends; the throttle of first attempts keeps the outage's attempts
// within 1.2 times the calls made in it (no retrying's, DESIGN §12), for
// four attempts a call; the callers that give up end canceled; the calls
// made after the outage succeed.
func TestRecommendedBudgetHoldsThroughALimiterUnderAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := outageRun(t, func(p core.Runnable) core.Runnable {
			limited, err := ratelimit.New(p, ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1)))
			if err != nil {
				t.Fatal(err)
			}
			return limited
		})
		if float64(st.attemptsInOutage) > 1.2*float64(st.callsInOutage) {
			t.Errorf("%d attempts reached the provider during the outage for %d calls made in it, want at most 1.2 times", st.attemptsInOutage, st.callsInOutage)
		}
		if st.afterOK != st.after {
			t.Errorf("%d of the %d calls made from 500ms after the outage succeeded, want all", st.afterOK, st.after)
		}
		if st.canceled == 0 {
			t.Error("no call ended by its caller giving up, want those that did")
		}
	})
}

// Inside the recommended chain the breaker sheds the outage first (its
// refusals are Local, so the budget does not count them): the outage's
// attempts stay below the calls made in it.
func TestRecommendedBudgetThroughTheChainUnderAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := outageRun(t, func(p core.Runnable) core.Runnable {
			r, _, _ := recommended(t, p, retry.RetryConfig{}, gobreaker.Settings{Name: "llm", Timeout: 200 * time.Millisecond},
				rate.NewLimiter(rate.Inf, 1))
			return r.(*retry.RetryRunnable).Unwrap()
		})
		if st.attemptsInOutage >= st.callsInOutage {
			t.Errorf("%d attempts reached the provider during the outage for %d calls made in it, want fewer", st.attemptsInOutage, st.callsInOutage)
		}
		if st.afterOK != st.after {
			t.Errorf("%d of the %d calls made from 500ms after the outage succeeded, want all", st.afterOK, st.after)
		}
	})
}

package retry_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// holder is a Holder that holds every first attempt for hold in steps of
// step, and counts the questions.
type holder struct {
	retry.Budget
	hold, step time.Duration
	asked      atomic.Int32
}

func (h *holder) HoldFirst(_ context.Context, held time.Duration) (time.Duration, bool) {
	h.asked.Add(1)
	if held >= h.hold {
		return 0, false
	}
	return min(h.step, h.hold-held), true
}

// startedAt is an inner Runnable that notes when it is called.
func startedAt(at *time.Time) core.Runnable {
	return core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
		*at = time.Now()
		return "ok", nil
	})
}

func TestHolderHoldsTheFirstAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		h := &holder{Budget: retry.NewTokenBudget(10, 1), hold: 300 * time.Millisecond, step: 100 * time.Millisecond}
		var at time.Time
		r := newRetry(t, startedAt(&at), testConfig(), append(rec.options(), retry.WithBudget(h))...)
		start := time.Now()
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		if got := at.Sub(start); got != 300*time.Millisecond {
			t.Errorf("first attempt after %v, want the hold, 300ms", got)
		}
		if got := h.asked.Load(); got != 4 {
			t.Errorf("HoldFirst asked %d times, want 4 (three waits of 100ms, then go)", got)
		}
		events := rec.one(t, "retry.invoke").Events()
		if len(events) != 1 || events[0].Name != "retry.budget.hold" {
			t.Fatalf("call span events = %v, want one retry.budget.hold", events)
		}
		if got := events[0].Attributes[0]; got.Key != "retry.backoff" || got.Value.AsFloat64() != 0.3 {
			t.Errorf("hold event attribute = %v, want retry.backoff=0.3", got)
		}
	})
}

// heldASecond is a RetryRunnable whose budget holds every first attempt
// for a second, over an inner Runnable that notes when it is called.
func heldASecond(t *testing.T, at *time.Time) *retry.RetryRunnable {
	h := &holder{Budget: retry.NewTokenBudget(10, 1), hold: time.Second, step: time.Second}
	return newRetry(t, startedAt(at), testConfig(), retry.WithBudget(h))
}

// A hold that the caller's deadline would cut short is skipped: the
// attempt goes at once rather than fail unmade.
func TestHoldIsSkippedWhenTheDeadlineIsNearer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var at time.Time
		r := heldASecond(t, &at)
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := r.Invoke(ctx, "q"); err != nil {
			t.Fatal(err)
		}
		if got := at.Sub(start); got != 0 {
			t.Errorf("first attempt after %v with a deadline nearer than the hold, want at once", got)
		}
	})
}

// A hold that would leave the attempt less time than it was held is
// skipped too: a deadline of 1.5 s leaves the attempt only half a second
// after a hold of one.
func TestHoldNeverSpendsTheTimeTheCallNeeds(t *testing.T) {
	for _, tc := range []struct {
		deadline, want time.Duration
	}{{1500 * time.Millisecond, 0}, {2500 * time.Millisecond, time.Second}} {
		synctest.Test(t, func(t *testing.T) {
			var at time.Time
			r := heldASecond(t, &at)
			ctx, cancel := context.WithTimeout(t.Context(), tc.deadline)
			defer cancel()
			start := time.Now()
			if _, err := r.Invoke(ctx, "q"); err != nil {
				t.Fatal(err)
			}
			if got := at.Sub(start); got != tc.want {
				t.Errorf("deadline %v: first attempt after %v, want %v", tc.deadline, got, tc.want)
			}
		})
	}
}

// The caller cancelling during a hold ends the call with no attempt made.
func TestCancelDuringTheHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var at time.Time
		r := heldASecond(t, &at)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(200*time.Millisecond, cancel)
		_, err := r.Invoke(ctx, "q")
		wantOutcome(t, err, retry.OutcomeCanceled, 0)
		if !errors.Is(err, context.Canceled) || !at.IsZero() {
			t.Errorf("err = %v, inner called at %v; want context.Canceled and no attempt", err, at)
		}
	})
}

// While most recent attempts fail, the recommended budget holds first attempts at
// twice the rate of the successes, each for at most maxWait; while most
// succeed it holds none.
func TestAdaptiveHoldsFirstAttemptsWhileMostFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 0.5, 1, time.Second)
		for range 200 { // healthy, with a quarter failing: nothing held
			for i := range 4 {
				b.RecordAttempt(ctx, 1, i > 0)
			}
			b.ReserveRetry(ctx, 0)
			time.Sleep(time.Millisecond)
		}
		if d, again := b.HoldFirst(ctx, 0); d != 0 || again {
			t.Errorf("HoldFirst() = %v, %v while three attempts in four succeed, want 0, false", d, again)
		}
		for range 300 { // an outage
			b.RecordAttempt(ctx, 1, false)
			b.ReserveRetry(ctx, 0)
			time.Sleep(time.Millisecond)
		}
		// Probes go at an eighth of the first attempts' rate: the first
		// held attempts get turns, a few milliseconds apart; the later ones
		// are told to ask again after 50 to 100ms.
		turns := 0
		for {
			d, again := b.HoldFirst(ctx, 0)
			if again {
				if d < 50*time.Millisecond || d > 100*time.Millisecond {
					t.Errorf("HoldFirst() = %v, true in an outage, want to ask again after 50 to 100ms", d)
				}
				break
			}
			if turns++; d > 100*time.Millisecond || turns > 100 {
				t.Fatalf("HoldFirst() = %v, false after %d turns in an outage, want turns at most 100ms away and then asking again", d, turns)
			}
		}
		if d, again := b.HoldFirst(ctx, time.Second); d != 0 || again {
			t.Errorf("HoldFirst() = %v, %v for an attempt held for maxWait, want 0, false", d, again)
		}
		for range 300 { // back: attempts succeed
			b.RecordAttempt(ctx, 1, true)
			time.Sleep(time.Millisecond)
		}
		if d, again := b.HoldFirst(ctx, 0); d != 0 || again {
			t.Errorf("HoldFirst() = %v, %v once attempts succeed again, want 0, false", d, again)
		}
	})
}

// A herd, every client's first attempt at the same instant after a quiet
// spell, is read as a second's worth of first attempts: not a trickle over
// the spell, nor a rate of thousands a second read over the instant it
// came in. Its retries are paced at half of it, or at half of what the
// provider answered in the last tenth of a second, if more.
func TestAdaptiveReadsAHerdAsASecondsWorth(t *testing.T) {
	for _, tc := range []struct {
		answered int
		want     float64
	}{
		{0, 100},   // half of 200 a second
		{150, 750}, // half of 150 answers in a tenth of a second
		{20, 100},  // half of 20 in a tenth, 100, no more than the herd earns
	} {
		synctest.Test(t, func(t *testing.T) {
			ctx := t.Context()
			b := newAdaptive(t, 0.5, 1, time.Second)
			time.Sleep(10 * time.Second) // created long before the herd
			for i := range 200 {
				b.RecordAttempt(ctx, 1, i < tc.answered)
			}
			b.ReserveRetry(ctx, time.Second)
			if got := b.Rate(); got != tc.want {
				t.Errorf("Rate() = %.0f after a herd of 200 of which %d were answered, want %.0f", got, tc.answered, tc.want)
			}
		})
	}
}

// A herd's retries pressed by their callers' deadline are read over the
// part of the deadline they may wait, not over a second: after a herd of
// 200 first attempts, 20 answered, and with retries last seen failing,
// the retries that may wait 100 ms are given several times the turns within
// it that a second's reading would give them.
func TestAdaptiveReadsAHerdOverTheDeadline(t *testing.T) {
	granted := func(maxWait time.Duration) (n int) {
		synctest.Test(t, func(t *testing.T) {
			ctx := t.Context()
			b := newAdaptive(t, 0.5, 1, time.Second)
			for range 10 { // retries that failed, a quorum, long before
				b.RecordAttempt(ctx, 1, false)
				b.RecordAttempt(ctx, 2, false)
			}
			b.Rate()
			time.Sleep(10 * time.Second)
			for i := range 200 {
				b.RecordAttempt(ctx, 1, i < 20)
			}
			for range 100 {
				if d, ok := turn(b.ReserveRetry(ctx, maxWait)); ok && d <= 100*time.Millisecond {
					n++
				}
			}
		})
		return n
	}
	short, long := granted(100*time.Millisecond), granted(time.Second)
	if short < 5*max(long, 1) {
		t.Errorf("%d turns within 100 ms for retries that may wait 100 ms, %d for those that may wait a second: want the first read over 100 ms (at least 5 times more)", short, long)
	}
}

// After a long healthy spell in which no retry asked, an outage's retries
// are held to a trickle from the start: the spell's attempts are not read
// as a herd.
func TestAdaptiveOutageAfterALongHealthySpell(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := newAdaptive(t, 0.5, 1, time.Second)
		for range 10000 { // 10s at 1000 calls a second, every one succeeding
			b.RecordAttempt(ctx, 1, true)
			time.Sleep(time.Millisecond)
		}
		allowed := 0
		for range 1000 { // a second of outage
			b.RecordAttempt(ctx, 1, false)
			if _, ok := turn(b.ReserveRetry(ctx, 0)); ok {
				allowed++
				b.RecordAttempt(ctx, 2, false)
			}
			time.Sleep(time.Millisecond)
		}
		if allowed > 40 {
			t.Errorf("%d retries allowed in the outage's first second, want a quorum to fail and the floor after it (at most 40)", allowed)
		}
	})
}

// panickyHolder panics when asked to hold.
type panickyHolder struct{ retry.Budget }

func (panickyHolder) HoldFirst(context.Context, time.Duration) (time.Duration, bool) {
	panic("from holder")
}

// A Holder that panics is a budget that panics, on the caller's goroutine:
// the panic propagates unchanged from Invoke, Batch and Stream, with the
// call span ended and no attempt made.
func TestHolderPanicPropagatesWithSpansEnded(t *testing.T) {
	for name, call := range map[string]func(*retry.RetryRunnable, context.Context){
		"invoke": func(r *retry.RetryRunnable, ctx context.Context) { _, _ = r.Invoke(ctx, "q") },
		"batch":  func(r *retry.RetryRunnable, ctx context.Context) { _, _ = r.Batch(ctx, []any{"q"}) },
		"stream": func(r *retry.RetryRunnable, ctx context.Context) { _, _ = r.Stream(ctx, "q") },
	} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder()
			var at time.Time
			r := newRetry(t, startedAt(&at), testConfig(), append(rec.options(), retry.WithBudget(panickyHolder{retry.NewTokenBudget(10, 1)}))...)
			func() {
				defer func() {
					if v := recover(); v != "from holder" {
						t.Errorf("recovered %v, want the holder's panic", v)
					}
				}()
				call(r, t.Context())
			}()
			wantEndedCall(t, rec, "retry."+name, 0)
			if !at.IsZero() {
				t.Error("an attempt was made")
			}
		})
	}
}

// The whole hold counts, not each step of it: a budget that holds in
// steps of 100ms for a second, under a deadline of 1.25 s, holds the
// attempt 0.6 s (leaving it 0.65 s), never 0.7 s or more (leaving it less
// than it was held).
func TestHoldInStepsNeverSpendsTheTimeTheCallNeeds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &holder{Budget: retry.NewTokenBudget(10, 1), hold: time.Second, step: 100 * time.Millisecond}
		var at time.Time
		r := newRetry(t, startedAt(&at), testConfig(), retry.WithBudget(h))
		ctx, cancel := context.WithTimeout(t.Context(), 1250*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := r.Invoke(ctx, "q"); err != nil {
			t.Fatal(err)
		}
		held := at.Sub(start)
		left := 1250*time.Millisecond - held
		if left < held || held != 600*time.Millisecond {
			t.Errorf("held %v, leaving the attempt %v; want held 600ms, the longest hold that leaves at least as long", held, left)
		}
	})
}

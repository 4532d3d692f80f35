package ratelimit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/ratelimit"
)

// reply is an LLM answer that reports its usage in tokens.
type reply struct{ tokens int }

// tokensOf is the usage function of these tests: a reply's tokens, or
// "does not say" for anything else.
func tokensOf(out any) int {
	if r, ok := out.(reply); ok {
		return r.tokens
	}
	return -1
}

// costOf estimates a prompt's cost: its length, in these tests.
func costOf(in any) int { return len(in.(string)) }

func isRetryable(err error) bool {
	r, ok := err.(interface{ Retryable() bool })
	return !ok || r.Retryable()
}

func tokens(lim *rate.Limiter) float64 { return lim.TokensAt(time.Now()) }

// The local backend's adjustments: more is taken into debt, and tokens
// given back fill the bucket up to its burst, never beyond. rate.Limiter
// does not document a negative reservation; this test pins it.
func TestInProcessAdjust(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(1, 10)
		b := ratelimit.InProcess(lim)
		ctx := t.Context()
		if res, err := b.Reserve(ctx, 10, 0); !res.OK || err != nil {
			t.Fatalf("Reserve(10) = %+v, %v; want the full bucket", res, err)
		}
		b.Adjust(ctx, -4)
		if got := tokens(lim); got != 4 {
			t.Errorf("after giving back 4: %v tokens, want 4", got)
		}
		b.Adjust(ctx, 25) // more than a burst: into debt
		if got := tokens(lim); got != -21 {
			t.Errorf("after taking 25 more: %v tokens, want -21", got)
		}
		b.Adjust(ctx, -100)
		if got := tokens(lim); got != 10 {
			t.Errorf("after giving back 100: %v tokens, want the burst, 10", got)
		}
		if _, err := b.Reserve(ctx, 11, time.Hour); !isBurst(err) {
			t.Errorf("Reserve(11) error = %v, want a *LimitedError over the burst", err)
		}
	})
}

// An Invoke takes its estimate, then settles on the usage its output
// reports: tokens given back when it used fewer, debt when it used more.
func TestInvokeSettlesOnUsage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(1, 100)
		inner := mock.New(mock.OK(reply{tokens: 4}), mock.OK(reply{tokens: 150}))
		r := newLimited(t, inner, lim, ratelimit.WithCost(costOf), ratelimit.WithUsage(tokensOf))
		if _, err := r.Invoke(t.Context(), "ten tokens"); err != nil {
			t.Fatal(err)
		}
		if got := tokens(lim); got != 96 {
			t.Errorf("after an estimate of 10 that used 4: %v tokens, want 96", got)
		}
		if _, err := r.Invoke(t.Context(), "ten tokens"); err != nil {
			t.Fatal(err)
		}
		if got := tokens(lim); got != -54 {
			t.Errorf("after an estimate of 10 that used 150: %v tokens, want -54 (debt)", got)
		}
		// The debt makes the next call wait until it is paid.
		start := time.Now()
		if _, err := r.Invoke(t.Context(), "x"); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 55*time.Second {
			t.Errorf("next call waited %v, want 55s", waited)
		}
	})
}

// The estimate stands when the output does not report its usage, and when
// the call failed.
func TestEstimateStandsWithoutUsage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(1, 100)
		inner := mock.New(mock.OK("no usage here"), mock.Fail(errors.New("boom")))
		r := newLimited(t, inner, lim, ratelimit.WithCost(costOf), ratelimit.WithUsage(tokensOf))
		_, _ = r.Invoke(t.Context(), "ten tokens")
		_, _ = r.Invoke(t.Context(), "ten tokens")
		if got := tokens(lim); got != 80 {
			t.Errorf("%v tokens, want 80: both estimates stand", got)
		}
	})
}

// A Batch takes the sum of its items' costs at once, and settles the items
// that succeeded.
func TestBatchSettlesSucceededItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(1, 100)
		inner := mock.New().
			ForInput("aaaa", mock.OK(reply{tokens: 1})).
			ForInput("bbbbbb", mock.Fail(errors.New("item failed"))).
			ForInput("cc", mock.OK(reply{tokens: 5}))
		r := newLimited(t, inner, lim, ratelimit.WithCost(costOf), ratelimit.WithUsage(tokensOf))
		_, err := r.Batch(t.Context(), []any{"aaaa", "bbbbbb", "cc"})
		if !errors.As(err, new(*core.BatchError)) {
			t.Fatalf("Batch() error = %v, want a *core.BatchError", err)
		}
		// Took 12; item 0 gives back 3, item 2 takes 3 more, item 1's
		// estimate of 6 stands.
		if got := tokens(lim); got != 88 {
			t.Errorf("%v tokens, want 88", got)
		}
	})
}

// A Stream settles when it ends without an error, on the sum of the usage
// its values report.
func TestStreamSettlesAtTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(1, 100)
		inner := mock.New(
			mock.Stream(nil, "chunk", reply{tokens: 2}, reply{tokens: 3}),
			mock.Stream(errors.New("cut"), reply{tokens: 1}))
		r := newLimited(t, inner, lim, ratelimit.WithCost(costOf), ratelimit.WithUsage(tokensOf))
		ch, err := r.Stream(t.Context(), "ten tokens")
		if err != nil {
			t.Fatal(err)
		}
		got := mock.Drain(ch)
		if len(got) != 3 {
			t.Fatalf("stream delivered %v, want its 3 values", got)
		}
		if n := tokens(lim); n != 95 {
			t.Errorf("after a stream that used 5 of 10: %v tokens, want 95", n)
		}
		ch, _ = r.Stream(t.Context(), "ten tokens")
		last := any(nil)
		for v := range ch {
			last = v
		}
		if _, ok := last.(error); !ok {
			t.Errorf("last value %v, want the stream's error", last)
		}
		if n := tokens(lim); n != 85 {
			t.Errorf("after a stream that failed: %v tokens, want 85 (the estimate stands)", n)
		}
	})
}

// A consumer that walks away ends the forwarding goroutine, and the
// estimate stands.
func TestStreamAbandonedKeepsEstimate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(1, 100)
		inner := mock.New(mock.Stream(nil, reply{tokens: 1}, reply{tokens: 1}, reply{tokens: 1}))
		r := newLimited(t, inner, lim, ratelimit.WithCost(costOf), ratelimit.WithUsage(tokensOf))
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := r.Stream(ctx, "ten tokens")
		if err != nil {
			t.Fatal(err)
		}
		<-ch
		cancel()
		synctest.Wait() // every goroutine of the stream has ended or is blocked for good
		if n := tokens(lim); n != 90 {
			t.Errorf("%v tokens, want 90", n)
		}
	})
}

// A usage function that panics on the forwarding goroutine ends the stream
// with a *core.PanicError as its last value.
func TestStreamUsagePanicIsTheLastValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Stream(nil, "a", "b"))
		r := newLimited(t, inner, rate.NewLimiter(1, 100),
			ratelimit.WithUsage(func(any) int { panic("usage bug") }))
		ch, err := r.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		var last any
		for v := range ch {
			last = v
		}
		if pe, ok := last.(*core.PanicError); !ok || pe.Value != "usage bug" {
			t.Errorf("last value %v, want a *core.PanicError carrying the panic", last)
		}
	})
}

// A negative cost is the caller's bug: a permanent, local error naming it,
// and the inner Runnable is not called.
func TestNegativeCostIsAnError(t *testing.T) {
	inner := mock.New()
	r := newLimited(t, inner, rate.NewLimiter(1, 100), ratelimit.WithCost(func(any) int { return -3 }))
	_, err := r.Invoke(t.Context(), "q")
	if err == nil || isRetryable(err) || !errproto.Local(err) || inner.CallCount() != 0 {
		t.Fatalf("Invoke() error = %v (%d inner calls), want a permanent local error", err, inner.CallCount())
	}
	if _, err := r.Batch(t.Context(), []any{"q"}); err == nil {
		t.Error("Batch() with a negative cost succeeded")
	}
}

// Requests per minute and tokens per minute: two Runnables stacked, one
// counting calls and one counting tokens; a call goes when both allow it.
func TestRequestsAndTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		requests := rate.NewLimiter(rate.Every(time.Second), 2) // 60 a minute
		toks := rate.NewLimiter(10, 100)                        // 600 a minute
		inner := mock.New(mock.OK(reply{tokens: 60}))
		var r core.Runnable = newLimited(t, inner, toks, ratelimit.WithCost(costOf), ratelimit.WithUsage(tokensOf))
		r = newLimited(t, r, requests)
		start := time.Now()
		for range 3 {
			if _, err := r.Invoke(t.Context(), "12345"); err != nil {
				t.Fatal(err)
			}
		}
		// Calls 1 and 2 pass at once (2 requests, 120 of 100 tokens: debt
		// 20); call 3 waits 1s for a request and 2.5s for its 5 tokens.
		if waited := time.Since(start); waited != 2500*time.Millisecond {
			t.Errorf("three calls took %v, want 2.5s", waited)
		}
	})
}

// WithMaxWait refuses a wait longer than it, and leaves the deadline rule
// for shorter deadlines; a negative one is an error.
func TestMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(1, 1)
		r := newLimited(t, mock.New(), lim, ratelimit.WithMaxWait(2*time.Second))
		_, _ = r.Invoke(t.Context(), "q") // the only token
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatalf("a 1s wait under a 2s WithMaxWait: %v", err)
		}
		lim.ReserveN(time.Now(), 1)
		lim.ReserveN(time.Now(), 1) // 2 in debt: the next token is 3s away
		_, err := r.Invoke(t.Context(), "q")
		var le *ratelimit.LimitedError
		if !errors.As(err, &le) || le.Deadline || le.Wait != 3*time.Second {
			t.Errorf("a 3s wait under a 2s WithMaxWait: error %v, want a refusal with Wait 3s", err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := r.Invoke(ctx, "q"); !errors.As(err, &le) || !le.Deadline {
			t.Errorf("a 3s wait with 1s to the deadline: error %v, want a deadline refusal", err)
		}
	})
	if _, err := ratelimit.New(mock.New(), ratelimit.InProcess(rate.NewLimiter(1, 1)), ratelimit.WithMaxWait(-time.Second)); err == nil ||
		!strings.Contains(err.Error(), "WithMaxWait(-1s)") {
		t.Errorf("New() with WithMaxWait(-1s): error %v, want one naming it", err)
	}
}

// An inner Batch that answers more outputs than it was given inputs is
// not settled (and does not make the limiter panic).
func TestBatchWithTooManyOutputsIsNotSettled(t *testing.T) {
	lim := rate.NewLimiter(1, 100)
	inner := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return reply{tokens: 1}, nil })
	broken := batchOnly{inner, []any{reply{tokens: 1}, reply{tokens: 1}, reply{tokens: 1}}}
	r := newLimited(t, broken, lim, ratelimit.WithCost(costOf), ratelimit.WithUsage(tokensOf))
	if _, err := r.Batch(t.Context(), []any{"abcd"}); err != nil {
		t.Fatal(err)
	}
	if got := int(tokens(lim)); got != 96 {
		t.Errorf("%d tokens, want 96: the estimate stands", got)
	}
}

// batchOnly answers every Batch with outs, whatever its inputs.
type batchOnly struct {
	core.RunnableFunc
	outs []any
}

func (b batchOnly) Batch(context.Context, []any, ...core.Option) ([]any, error) { return b.outs, nil }

// isBurst reports a refusal over the bucket's burst.
func isBurst(err error) bool {
	le, ok := errors.AsType[*ratelimit.LimitedError](err)
	return ok && le.Burst > 0 && !le.Retryable()
}

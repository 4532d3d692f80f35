// Package bench compares steadfast with the other Go retry libraries: the
// cost of their hot paths (bench_test.go) and what they do to a struggling
// provider (package storm, go run ./cmd/storm). It is its own module so that
// steadfast's users never inherit the peer libraries.
package bench

import (
	"context"
	"strings"
	"time"

	"github.com/avast/retry-go/v4"
	"github.com/cenkalti/backoff/v5"
	"github.com/failsafe-go/failsafe-go"
	fsbudget "github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	goretry "github.com/sethvargo/go-retry"

	"github.com/steadfast-go/steadfast/core"
	sfretry "github.com/steadfast-go/steadfast/retry"
)

// Policy is the retry policy every library is configured with: the same
// attempts, initial delay, growth and cap, and a jitter of the same size,
// each library applying it its own way.
type Policy struct {
	Attempts int // in all, the first included
	Initial  time.Duration
	Factor   float64
	Max      time.Duration
	Jitter   float64 // the share of a delay that jitter may add or take
}

// Op is the operation retried: it fails with an error the library should
// retry, or succeeds.
type Op func(ctx context.Context) error

// Retrier runs an Op with one library's retries. Every implementation is
// safe for concurrent use and returns promptly when ctx is done.
type Retrier interface {
	Name() string
	Do(ctx context.Context, op Op) error
}

// Floor is what a retry layer's success path cannot go below (DESIGN
// §12): ctx.Err, one context.WithValue holding the attempt, and the inner
// call through the same core.Runnable steadfast wraps. BenchmarkSuccess
// measures steadfast beside it, in one run.
func Floor() Retrier { return floor{inner: core.RunnableFunc(runOp)} }

type floor struct{ inner core.Runnable }

type floorAttempt struct{ n int }

type floorKey struct{}

func (floor) Name() string { return "floor" }
func (f floor) Do(ctx context.Context, op Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := f.inner.Invoke(context.WithValue(ctx, floorKey{}, &floorAttempt{n: 1}), op)
	return err
}

// NoRetry makes one attempt: the baseline of the storm scenarios.
func NoRetry() Retrier { return noRetry{} }

type noRetry struct{}

func (noRetry) Name() string                        { return "no-retry" }
func (noRetry) Do(ctx context.Context, op Op) error { return op(ctx) }

// Steadfast is a RetryRunnable configured with p; opts add telemetry
// providers or a budget.
func Steadfast(name string, p Policy, opts ...sfretry.Option) Retrier {
	cfg := sfretry.RetryConfig{
		MaxRetries:     p.Attempts - 1,
		InitialBackoff: p.Initial,
		MaxBackoff:     p.Max,
		BackoffFactor:  p.Factor,
		Jitter:         p.Jitter,
	}
	return steadfast{name: name, r: sfretry.NewRetryRunnable(core.RunnableFunc(runOp), cfg, opts...)}
}

type steadfast struct {
	name string
	r    *sfretry.RetryRunnable
}

// runOp runs the Op passed as the input: a func value is pointer-shaped, so
// passing it as an any does not allocate.
func runOp(ctx context.Context, in any, _ ...core.Option) (any, error) {
	return nil, in.(Op)(ctx)
}

func (s steadfast) Name() string { return s.name }
func (s steadfast) Do(ctx context.Context, op Op) error {
	_, err := s.r.Invoke(ctx, op)
	return err
}

// Cenkalti is github.com/cenkalti/backoff/v5 with an ExponentialBackOff
// whose RandomizationFactor is the jitter.
func Cenkalti(p Policy) Retrier { return cenkalti{p} }

type cenkalti struct{ p Policy }

func (cenkalti) Name() string { return "cenkalti/backoff" }
func (c cenkalti) Do(ctx context.Context, op Op) error {
	b := &backoff.ExponentialBackOff{
		InitialInterval:     c.p.Initial,
		RandomizationFactor: c.p.Jitter,
		Multiplier:          c.p.Factor,
		MaxInterval:         c.p.Max,
	}
	b.Reset()
	_, err := backoff.Retry(ctx, func() (struct{}, error) { return struct{}{}, op(ctx) },
		backoff.WithBackOff(b), backoff.WithMaxTries(uint(c.p.Attempts)), backoff.WithMaxElapsedTime(0))
	return err
}

// Avast is github.com/avast/retry-go/v4 with its default delay type,
// exponential backoff plus a random delay of up to Jitter × Initial.
func Avast(p Policy) Retrier { return avast{p} }

type avast struct{ p Policy }

func (avast) Name() string { return "avast/retry-go" }
func (a avast) Do(ctx context.Context, op Op) error {
	return retry.Do(func() error { return op(ctx) },
		retry.Context(ctx),
		retry.Attempts(uint(a.p.Attempts)),
		retry.Delay(a.p.Initial),
		retry.MaxDelay(a.p.Max),
		// At least 1ns: avast panics on a zero MaxJitter (rand.Int63n(0)).
		retry.MaxJitter(max(time.Duration(a.p.Jitter*float64(a.p.Initial)), 1)),
		retry.DelayType(retry.CombineDelay(retry.BackOffDelay, retry.RandomDelay)),
		retry.LastErrorOnly(true))
}

// Sethvargo is github.com/sethvargo/go-retry with an exponential backoff,
// capped, with WithJitterPercent.
func Sethvargo(p Policy) Retrier { return sethvargo{p} }

type sethvargo struct{ p Policy }

func (sethvargo) Name() string { return "sethvargo/go-retry" }
func (s sethvargo) Do(ctx context.Context, op Op) error {
	b := goretry.NewExponential(s.p.Initial)
	b = goretry.WithCappedDuration(s.p.Max, b)
	b = goretry.WithJitterPercent(uint64(s.p.Jitter*100), b)
	b = goretry.WithMaxRetries(uint64(s.p.Attempts-1), b)
	return goretry.Do(ctx, b, func(ctx context.Context) error {
		if err := op(ctx); err != nil {
			return goretry.RetryableError(err)
		}
		return nil
	})
}

// Failsafe is github.com/failsafe-go/failsafe-go's retry policy with
// WithJitterFactor; with maxRate > 0 it shares a failsafe-go budget that
// caps the share of in-flight executions that may be retries.
func Failsafe(p Policy, maxRate float64) Retrier {
	b := retrypolicy.NewBuilder[any]().
		WithMaxAttempts(p.Attempts).
		WithBackoffFactor(p.Initial, p.Max, p.Factor).
		WithJitterFactor(p.Jitter).
		ReturnLastFailure()
	name := "failsafe-go"
	if maxRate > 0 {
		b = b.WithBudget(fsbudget.NewBuilder().WithMaxRate(maxRate).Build())
		name = "failsafe-go+budget"
	}
	return failsafeRetrier{name: name, exec: failsafe.With[any](b.Build())}
}

type failsafeRetrier struct {
	name string
	exec failsafe.Executor[any]
}

func (f failsafeRetrier) Name() string { return f.name }
func (f failsafeRetrier) Do(ctx context.Context, op Op) error {
	return f.exec.WithContext(ctx).Run(func() error { return op(ctx) })
}

// IsPeer reports whether lib is another retry library: neither the
// no-retry baseline nor a steadfast setting.
func IsPeer(lib string) bool { return lib != "no-retry" && !strings.HasPrefix(lib, "steadfast") }

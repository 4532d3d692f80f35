package steadfast_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/hedge"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// cannotResume streams like breaksOnce but has no Resume.
type cannotResume struct{ b *breaksOnce }

func (c cannotResume) Invoke(ctx context.Context, in any, o ...core.Option) (any, error) {
	return c.b.Invoke(ctx, in, o...)
}
func (c cannotResume) Batch(ctx context.Context, in []any, o ...core.Option) ([]any, error) {
	return c.b.Batch(ctx, in, o...)
}
func (c cannotResume) Stream(ctx context.Context, in any, o ...core.Option) (<-chan any, error) {
	return c.b.Stream(ctx, in, o...)
}

// recordingBudget allows every retry and records what it is told.
type recordingBudget struct {
	mu       sync.Mutex
	reserved int
	records  []attemptRecord
}

type attemptRecord struct {
	n       int
	success bool
}

func (b *recordingBudget) Reserve(_ context.Context, n int, _ time.Duration) core.Reservation {
	if n <= 1 {
		return core.Reservation{OK: true}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reserved++
	return core.Reservation{OK: true}
}

func (b *recordingBudget) RecordAttempt(_ context.Context, n int, success bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.records = append(b.records, attemptRecord{n, success})
}

// decorators wrap a Runnable in each decorator, alone or among others.
func decorators(t *testing.T) map[string]func(core.Runnable) core.Runnable {
	must := func(r core.Runnable, err error) core.Runnable {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	return map[string]func(core.Runnable) core.Runnable{
		"breaker": func(r core.Runnable) core.Runnable {
			return must(breaker.New(r, gobreaker.Settings{Name: "llm"}, breaker.WithMeterProvider(noop.NewMeterProvider())))
		},
		"ratelimit": func(r core.Runnable) core.Runnable {
			return must(ratelimit.New(r, ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1)), ratelimit.WithMeterProvider(noop.NewMeterProvider())))
		},
		"hedge": func(r core.Runnable) core.Runnable {
			return must(hedge.New(r, hedge.Config{Delay: time.Hour, MaxHedges: 1}))
		},
		"hedge with an alternate": func(r core.Runnable) core.Runnable {
			return must(hedge.New(r, hedge.Config{Delay: time.Hour, MaxHedges: 1}, hedge.WithAlternates(r)))
		},
		"pool": func(r core.Runnable) core.Runnable {
			return must(pool.New([]pool.Deployment{{Name: "a", Runnable: r}, {Name: "b", Runnable: r}}))
		},
		"fallback": func(r core.Runnable) core.Runnable {
			return must(fallback.New([]core.Runnable{r, r}))
		},
		"concurrency": func(r core.Runnable) core.Runnable {
			return must(ratelimit.NewConcurrency(r, ratelimit.ConcurrencyConfig{MeterProvider: noop.NewMeterProvider()}))
		},
		"breaker(ratelimit(concurrency(pool)))": func(r core.Runnable) core.Runnable {
			p := must(pool.New([]pool.Deployment{{Name: "a", Runnable: r}}))
			c := must(ratelimit.NewConcurrency(p, ratelimit.ConcurrencyConfig{MeterProvider: noop.NewMeterProvider()}))
			rl := must(ratelimit.New(c, ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1)), ratelimit.WithMeterProvider(noop.NewMeterProvider())))
			return must(breaker.New(rl, gobreaker.Settings{Name: "llm"}, breaker.WithMeterProvider(noop.NewMeterProvider())))
		},
		"breaker(ratelimit(pool))": func(r core.Runnable) core.Runnable {
			p := must(pool.New([]pool.Deployment{{Name: "a", Runnable: r}}))
			rl := must(ratelimit.New(p, ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1)), ratelimit.WithMeterProvider(noop.NewMeterProvider())))
			return must(breaker.New(rl, gobreaker.Settings{Name: "llm"}, breaker.WithMeterProvider(noop.NewMeterProvider())))
		},
	}
}

// With ResumeStreams over a chain that cannot resume, a stream that breaks
// after its first chunk ends at once: no backoff, no budget, no attempt.
// Over the same chain of a Runnable that can resume, it is resumed.
func TestNoResumeIsTriedThroughAChainThatCannotResume(t *testing.T) {
	for name, wrap := range decorators(t) {
		synctest.Test(t, func(t *testing.T) {
			inner := &breaksOnce{n: 3}
			chain := wrap(cannotResume{inner})
			if canResume(chain) {
				t.Fatalf("%s over a Runnable without Resume: CanResume = true", name)
			}
			if !canResume(wrap(inner)) {
				t.Fatalf("%s over a Resumer: CanResume = false", name)
			}
			res := streamResuming(t, chain)
			got, last, budget, attempts, elapsed := res.chunks, res.last, res.budget, res.attempts, res.took
			if !slices.Equal(got, []any{1}) || !errors.Is(last, io.ErrUnexpectedEOF) {
				t.Errorf("%s: stream = %v, %v; want 1, then the break", name, got, last)
			}
			if errors.Is(last, streams.ErrNotResumable) || budget.reserved != 0 || attempts != 1 || elapsed != 0 {
				t.Errorf("%s: a Resume was tried: last %v, budget asked %d times, %d attempts, %v slept; want none, 1 attempt, 0s",
					name, last, budget.reserved, attempts, elapsed)
			}

			res = streamResuming(t, wrap(inner))
			got, last, budget, attempts = res.chunks, res.last, res.budget, res.attempts
			if !slices.Equal(got, []any{1, 2, 3}) || last != nil || budget.reserved != 1 || attempts != 2 {
				t.Errorf("%s over a Resumer: stream = %v, %v, budget asked %d times, %d attempts; want 1 2 3, once, 2",
					name, got, last, budget.reserved, attempts)
			}
		})
	}
}

// A chain that can resume some streams (a fallback whose first candidate
// cannot) asks, when a stream breaks, about that stream: one committed on
// the candidate that cannot resume ends at once.
func TestAStreamOnACandidateThatCannotResumeEndsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		resumable := &breaksOnce{n: 3}
		fb, err := fallback.New([]core.Runnable{cannotResume{&breaksOnce{n: 3}}, resumable})
		if err != nil {
			t.Fatal(err)
		}
		if !canResume(fb) {
			t.Fatal("fallback with a resumable candidate: CanResume = false")
		}
		res := streamResuming(t, fb)
		got, last, budget, attempts, elapsed := res.chunks, res.last, res.budget, res.attempts, res.took
		if !slices.Equal(got, []any{1}) || !errors.Is(last, io.ErrUnexpectedEOF) || budget.reserved != 0 || attempts != 1 || elapsed != 0 {
			t.Errorf("stream = %v, %v, budget asked %d times, %d attempts, %v slept; want 1, the break, 0, 1, 0s",
				got, last, budget.reserved, attempts, elapsed)
		}
	})
}

// A stream resumed after its commit reports each attempt to the budget
// exactly once: the committing attempt a success at its first chunk (not
// again as a failure when it breaks), the resumed one when it ends.
func TestAResumedStreamReportsEachAttemptOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res := streamResuming(t, &breaksOnce{n: 3})
		got, last, budget := res.chunks, res.last, res.budget
		if !slices.Equal(got, []any{1, 2, 3}) || last != nil {
			t.Fatalf("stream = %v, %v, want 1 2 3", got, last)
		}
		if want := []attemptRecord{{1, true}, {2, true}}; !slices.Equal(budget.records, want) {
			t.Errorf("budget told %v, want %v: each attempt once", budget.records, want)
		}
	})
}

// resumed is what streamResuming saw.
type resumed struct {
	chunks   []any
	last     error
	budget   *recordingBudget
	attempts int           // attempt spans
	took     time.Duration // the call's time, start to end
}

// streamResuming streams through retry, with ResumeStreams and a recording
// budget, around inner.
func streamResuming(t *testing.T, inner core.Runnable) resumed {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	budget := &recordingBudget{}
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Second, ResumeStreams: true}
	r, err := retry.New(inner, cfg, retry.WithBudget(budget),
		retry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ch, err := r.Stream(t.Context(), "q")
	if err != nil {
		t.Fatal(err)
	}
	chunks, last := readAll(ch)
	took := time.Since(start)
	synctest.Wait()
	attempts := 0
	for _, s := range rec.Ended() {
		if s.Name() == "retry.attempt" {
			attempts++
		}
	}
	return resumed{chunks, last, budget, attempts, took}
}

// canResume asks r, as the retry layer does when it is built, whether any
// of its streams can resume.
func canResume(r core.Runnable) bool {
	res, ok := r.(core.Resumer)
	return ok && res.CanResume(context.Background())
}

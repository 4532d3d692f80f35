package steadfast_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
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
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

func numbered(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// resumeThrough streams through retry, with ResumeStreams, around inner.
func resumeThrough(t *testing.T, inner core.Runnable) (chunks []any, last error) {
	t.Helper()
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Second, ResumeStreams: true}
	r, err := retry.New(inner, cfg, quiet...)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := r.Stream(t.Context(), "q")
	if err != nil {
		t.Fatal(err)
	}
	return readAll(ch)
}

func readAll(ch <-chan any) (chunks []any, last error) {
	for v := range ch {
		if err, ok := v.(error); ok {
			last = err
			continue
		}
		chunks = append(chunks, v)
	}
	return chunks, last
}

// A stall after the first chunk is a failure of the provider: a breaker
// inside the retry layer counts it, and the consumer gets it as the last
// value, with and without the breaker.
func TestStallCountsInTheBreakerInside(t *testing.T) {
	for _, withBreaker := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			inner := mock.NewResumable(3, time.Second, func(any) []mock.Fault {
				return []mock.Fault{{After: 1, Kind: mock.Stall}}
			})
			var chain core.Runnable = inner
			var cb *breaker.Runnable
			if withBreaker {
				var err error
				if cb, err = breaker.New(inner, gobreaker.Settings{Name: "llm"}, breaker.WithMeterProvider(noop.NewMeterProvider())); err != nil {
					t.Fatal(err)
				}
				chain = cb
			}
			r, err := retry.New(chain, retry.RetryConfig{ChunkTimeout: 10 * time.Second}, quiet...)
			if err != nil {
				t.Fatal(err)
			}
			ch, err := r.Stream(t.Context(), "q")
			if err != nil {
				t.Fatal(err)
			}
			got, last := readAll(ch)
			if !slices.Equal(got, numbered(1)) || !errors.Is(last, retry.ErrStreamStalled) {
				t.Fatalf("breaker %v: stream = %v, %v; want 1 then ErrStreamStalled", withBreaker, got, last)
			}
			synctest.Wait() // the breaker's forwarder has counted
			if cb != nil {
				if c := cb.Counts(); c.TotalFailures != 1 || c.TotalSuccesses != 0 {
					t.Errorf("breaker counts = %+v, want the stall as one failure", c)
				}
			}
		})
	}
}

// Every decorator answers streams.ErrNotResumable for an inner Runnable that
// cannot resume, and passes a resume through to one that can.
func TestNotResumableThroughEveryDecorator(t *testing.T) {
	wrap := map[string]func(core.Runnable) core.Runnable{
		"breaker": func(r core.Runnable) core.Runnable {
			cb, _ := breaker.New(r, gobreaker.Settings{}, breaker.WithMeterProvider(noop.NewMeterProvider()))
			return cb
		},
		"ratelimit": func(r core.Runnable) core.Runnable {
			l, _ := ratelimit.New(r, ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1)), ratelimit.WithMeterProvider(noop.NewMeterProvider()))
			return l
		},
		"hedge": func(r core.Runnable) core.Runnable {
			h, _ := hedge.New(r, hedge.Config{Delay: time.Second, MaxHedges: 1})
			return h
		},
		"retry": func(r core.Runnable) core.Runnable {
			rr, _ := retry.New(r, retry.RetryConfig{}, quiet...)
			return rr
		},
	}
	for name, w := range wrap {
		synctest.Test(t, func(t *testing.T) {
			resumer, ok := w(mock.New()).(core.Resumer)
			if !ok {
				t.Fatalf("%s is not a core.Resumer", name)
			}
			if _, err := resumer.Resume(t.Context(), "q", 1); !errors.Is(err, streams.ErrNotResumable) {
				t.Errorf("%s over a Runnable that cannot resume: Resume() = %v, want streams.ErrNotResumable", name, err)
			}
			ch, err := w(mock.NewResumable(3, 0, nil)).(core.Resumer).Resume(t.Context(), "q", 1)
			if err != nil {
				t.Fatalf("%s over a Resumer: Resume() error = %v", name, err)
			}
			if got, last := readAll(ch); !slices.Equal(got, []any{2, 3}) || last != nil {
				t.Errorf("%s: Resume(after 1) = %v, %v, want 2 3", name, got, last)
			}
		})
	}
}

// fallback resumes a stream only on the candidate it committed on, and
// only when it knows the stream (by the retry layer's InvocationID).
func TestFallbackResumesOnTheCandidateThatCommitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		down := mock.New(mock.Fail(errors.New("down")))
		second := mock.NewResumable(4, 0, func(any) []mock.Fault { return []mock.Fault{{After: 2, Kind: mock.Drop}} })
		fb, err := fallback.New([]core.Runnable{down, second}, fallback.WithSwitchIf(func(error) bool { return true }))
		if err != nil {
			t.Fatal(err)
		}
		if got, last := resumeThrough(t, fb); !slices.Equal(got, numbered(4)) || last != nil {
			t.Errorf("stream = %v, %v, want 1 to 4 once each", got, last)
		}
		if _, resumes := second.Counts(); resumes != 1 || down.CallCount() != 1 {
			t.Errorf("resumes on the second candidate = %d, calls to the first = %d; want 1 and 1", resumes, down.CallCount())
		}
		if _, err := fb.Resume(t.Context(), "q", 2); !errors.Is(err, streams.ErrNotResumable) {
			t.Errorf("Resume of a stream fallback does not know = %v, want streams.ErrNotResumable", err)
		}
	})
}

// Hundreds of concurrent streams through retry(breaker(ratelimit(a
// resumable provider))), each broken at random by stalls, dropped
// connections and 503s: every consumer receives 1 to N exactly once, in
// order; no goroutine is left (goleak at exit) and every span ends.
func TestConcurrentStreamsResumeUnderFaults(t *testing.T) {
	const streams, n = 300, 20
	synctest.Test(t, func(t *testing.T) {
		plan := make([][]mock.Fault, streams)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range plan {
			for after := 1; after < n; after++ {
				if rng.Float64() < 0.1 {
					kind := []mock.FaultKind{mock.Stall, mock.Drop, mock.ErrorValue}[rng.IntN(3)]
					plan[i] = append(plan[i], mock.Fault{After: after, Kind: kind, Err: &mock.HTTPError{Code: 503}})
				}
			}
		}
		provider := mock.NewResumable(n, 10*time.Millisecond, func(in any) []mock.Fault { return plan[in.(int)] })
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		limited, err := ratelimit.New(provider, ratelimit.InProcess(rate.NewLimiter(2000, 100)), ratelimit.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		cb, err := breaker.New(limited, gobreaker.Settings{Name: "llm", ReadyToTrip: func(gobreaker.Counts) bool { return false }},
			breaker.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		cfg := retry.RetryConfig{MaxRetries: n, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
			Jitter: 0.5, ChunkTimeout: time.Second, ResumeStreams: true}
		r, err := retry.New(cb, cfg, retry.WithTracerProvider(tp), retry.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, streams)
		for i := range streams {
			wg.Go(func() {
				ch, err := r.Stream(t.Context(), i)
				if err != nil {
					errs <- fmt.Errorf("stream %d: %w", i, err)
					return
				}
				if got, last := readAll(ch); !slices.Equal(got, numbered(n)) || last != nil {
					errs <- fmt.Errorf("stream %d (faults %v): got %v, %v", i, plan[i], got, last)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		synctest.Wait()
		faults := 0
		for _, p := range plan {
			faults += len(p)
		}
		if _, resumes := provider.Counts(); resumes != faults {
			t.Errorf("resumes = %d, want one per fault, %d", resumes, faults)
		}
		if started, ended := len(rec.Started()), len(rec.Ended()); started != ended || ended < streams {
			t.Errorf("spans started %d, ended %d; want all of at least %d ended", started, ended, streams)
		}
	})
}

// hedge resumes a stream on the target it won on: here an alternate, as
// the first target failed before its first chunk.
func TestHedgeResumesOnTheTargetItWonOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := mock.New(mock.Stream(errors.New("overloaded")))
		alternate := mock.NewResumable(4, 0, func(any) []mock.Fault { return []mock.Fault{{After: 2, Kind: mock.Drop}} })
		h, err := hedge.New(first, hedge.Config{Delay: time.Second, MaxHedges: 1}, hedge.WithAlternates(alternate))
		if err != nil {
			t.Fatal(err)
		}
		if got, last := resumeThrough(t, h); !slices.Equal(got, numbered(4)) || last != nil {
			t.Errorf("stream = %v, %v, want 1 to 4 once each", got, last)
		}
		if _, resumes := alternate.Counts(); resumes != 1 {
			t.Errorf("resumes on the alternate = %d, want 1", resumes)
		}
	})
}

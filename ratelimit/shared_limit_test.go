package ratelimit_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/ratelimit"
)

// shared is a ratelimit.SharedLimit in memory: the test sets the share.
type shared struct {
	mu    sync.Mutex
	limit float64
	epoch uint64
	ok    bool
	got   []ratelimit.Outcome
}

func (s *shared) Observe(o ratelimit.Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, o)
}

func (s *shared) Share() (float64, uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limit, s.epoch, s.ok
}

func (s *shared) set(limit float64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit, s.ok = limit, ok
}

func (s *shared) outcomes() []ratelimit.Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ratelimit.Outcome(nil), s.got...)
}

// With a SharedLimit, the calls in flight are bounded by its share, not
// by Initial, and every call's end goes to it: a 429 is an Outcome with
// the epoch it was admitted at, and changes no limit here.
func TestASharedLimitBoundsByItsShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &shared{limit: 3, epoch: 5, ok: true}
		p := &hidden{capacity: 100, service: time.Second}
		r := newConcurrency(t, p, ratelimit.ConcurrencyConfig{Initial: 10, Shared: s})
		start := time.Now()
		for _, err := range invokeAll(t.Context(), r, 6) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if peak, _, _ := p.counts(); peak != 3 || time.Since(start) != 2*time.Second {
			t.Errorf("peak %d in %v; want 3 at once (the share), 6 answers in 2s", peak, time.Since(start))
		}
		got := s.outcomes()
		if len(got) != 6 || !got[0].Clean || got[0].Cost != 1 || got[0].Epoch != 5 {
			t.Fatalf("outcomes %+v; want 6 clean ones of cost 1 at epoch 5", got)
		}

		over := &hidden{capacity: 0, retryAfter: 2 * time.Second}
		reader := sdkmetric.NewManualReader()
		r = newConcurrency(t, over, ratelimit.ConcurrencyConfig{Initial: 10, Shared: s,
			MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		for _, err := range invokeAll(t.Context(), r, 3) {
			if err == nil {
				t.Fatal("a 429 answered nil")
			}
		}
		got = s.outcomes()[6:]
		if len(got) != 3 || !got[0].Overload || got[0].Hint != 2*time.Second || got[0].Clean {
			t.Fatalf("outcomes %+v; want 3 overloads with a 2s hint", got)
		}
		if got := limitOf(t, reader); got != 3 {
			t.Errorf("limit %d after the 429s; want 3: the share, not a limit cut here", got)
		}
	})
}

// A share that grows lets waiting calls go as calls end, one more at
// each end (the room a raise adds is not let go at once); a store that
// cannot be reached leaves the limit to adapt here, from the last share:
// an overload cuts it, and the store is not told.
func TestASharedLimitFallsBackToItsLastShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &shared{limit: 1, ok: true}
		p := &hidden{capacity: 100, service: time.Second}
		r := newConcurrency(t, p, ratelimit.ConcurrencyConfig{Initial: 10, Shared: s})
		go func() {
			time.Sleep(500 * time.Millisecond)
			s.set(4, true)
		}()
		start := time.Now()
		for _, err := range invokeAll(t.Context(), r, 5) {
			if err != nil {
				t.Fatal(err)
			}
		}
		// 1, then 2 as the first ended (its room and one of the raise),
		// then the last 2: 5 answers in 3 s. Which of the two calls that
		// end together at 2 s is told first is the scheduler's: the last
		// two may start before the other has left the provider (3 in
		// flight, within the share of 4), never the whole share at once.
		if peak, _, _ := p.counts(); peak < 2 || peak > 3 || time.Since(start) != 3*time.Second {
			t.Errorf("peak %d in %v; want 1, then 2 as the first ended, then the last 2: 5 answers in 3s", peak, time.Since(start))
		}

		s.set(0, false) // unreachable
		before := len(s.outcomes())
		over := &hidden{capacity: 2, service: time.Second}
		reader := sdkmetric.NewManualReader()
		r = newConcurrency(t, over, ratelimit.ConcurrencyConfig{Initial: 10, Shared: s,
			MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		s.set(4, true)
		if _, err := r.Invoke(t.Context(), "warm"); err != nil { // takes the share of 4
			t.Fatal(err)
		}
		s.set(0, false)
		done := make(chan struct{})
		go func() {
			defer close(done)
			invokeAll(t.Context(), r, 4) // two answered, two 429s at once
		}()
		time.Sleep(500 * time.Millisecond)
		if got := limitOf(t, reader); got != 2 {
			t.Errorf("limit %d after two 429s with the store away; want 2: the last share of 4 cut by 0.7 here", got)
		}
		<-done
		if got := len(s.outcomes()) - before; got != 1 {
			t.Errorf("%d outcomes told the store; want 1, the call made while it answered", got)
		}
	})
}

// timed is a provider whose answer is its input: a duration it takes, or
// a 429 at once for any other input. It counts the calls it holds.
type timed struct {
	mu       sync.Mutex
	inflight int
}

func (p *timed) Invoke(ctx context.Context, in any, _ ...core.Option) (any, error) {
	d, ok := in.(time.Duration)
	if !ok {
		return nil, &mock.HTTPError{Code: 429}
	}
	p.mu.Lock()
	p.inflight++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.inflight--
		p.mu.Unlock()
	}()
	select {
	case <-time.After(d):
		return "ok", nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *timed) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(p.Invoke).Batch(ctx, in, opts...)
}

func (p *timed) Stream(ctx context.Context, in any, opts ...core.Option) (<-chan any, error) {
	return streamOf(p.Invoke(ctx, in, opts...))
}

func (p *timed) held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inflight
}

// A 429 says the provider is full: its room is not given to a waiting
// call, which would meet another 429 before the shared limit's cut comes
// back from the store. The next call to end opens it.
func TestAnOverloadsRoomWaitsForTheNextEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &shared{limit: 3, ok: true} // the store has not cut yet
		p := &timed{}
		r := newConcurrency(t, p, ratelimit.ConcurrencyConfig{Initial: 3, Shared: s})
		var wg sync.WaitGroup
		for _, in := range []any{time.Second, time.Second, "429", 2 * time.Second} {
			wg.Go(func() { _, _ = r.Invoke(t.Context(), in) })
			synctest.Wait()
		}
		if got := p.held(); got != 2 {
			t.Errorf("%d calls at the provider after a 429; want 2: its room stays shut", got)
		}
		time.Sleep(1500 * time.Millisecond) // the two 1s calls ended
		if got := p.held(); got != 1 {
			t.Errorf("%d calls at the provider after two ends; want 1, the waiting call", got)
		}
		wg.Wait()
		if got := len(s.outcomes()); got != 4 {
			t.Errorf("%d outcomes; want 4", got)
		}
	})
}

// After a cut of the shared limit, the calls admitted before it are still
// in flight on every replica, and the cut takes effect only as they end:
// until this replica's have ended, an end lets only its replacement go,
// even where the share would let more, so that this replica does not
// grow into room another replica has not yet given up.
func TestNoGrowthUntilTheCallsBeforeACutHaveEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &shared{limit: 3, ok: true}
		p := &timed{}
		r := newConcurrency(t, p, ratelimit.ConcurrencyConfig{Initial: 3, Shared: s})
		var wg sync.WaitGroup
		defer wg.Wait()
		call := func(in any) {
			wg.Go(func() { _, _ = r.Invoke(t.Context(), in) })
			synctest.Wait()
		}
		call(time.Second)
		call(2 * time.Second)
		call("429") // held back: 2 in flight, of a share of 3
		s.mu.Lock()
		s.epoch = 1 // the store cut the fleet's limit; this share stays 3
		s.mu.Unlock()
		for range 3 {
			call(5 * time.Second)
		}
		time.Sleep(1500 * time.Millisecond) // the 1s call ended
		if got := p.held(); got != 2 {
			t.Errorf("%d calls at the provider after a call from before the cut ended; want 2: its replacement only", got)
		}
		time.Sleep(time.Second) // the 2s call ended too
		if got := p.held(); got != 3 {
			t.Errorf("%d calls at the provider once the calls from before the cut ended; want 3, the share", got)
		}
	})
}

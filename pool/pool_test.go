package pool_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tnoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/batchcheck"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = []retry.Option{retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider())}

func newPool(t *testing.T, ds []pool.Deployment, opts ...pool.Option) *pool.Runnable {
	t.Helper()
	p, err := pool.New(ds, append([]pool.Option{pool.WithMeterProvider(noop.NewMeterProvider())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func retried(t *testing.T, inner core.Runnable, opts ...retry.Option) *retry.RetryRunnable {
	t.Helper()
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: 10 * time.Second}
	r, err := retry.New(inner, cfg, append(slices.Clone(quiet), opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	err503 = &mock.HTTPError{Code: 503}
	err400 = &mock.HTTPError{Code: 400}
)

func throttled(after time.Duration) error { return &mock.HTTPError{Code: 429, After: after} }

func TestNewRejectsBadDeployments(t *testing.T) {
	ok := mock.New()
	for _, tc := range []struct {
		name string
		ds   []pool.Deployment
		opts []pool.Option
	}{
		{"none", nil, nil},
		{"no runnable", []pool.Deployment{{Name: "a"}}, nil},
		{"no name", []pool.Deployment{{Runnable: ok}}, nil},
		{"same name", []pool.Deployment{{Name: "a", Runnable: ok}, {Name: "a", Runnable: ok}}, nil},
		{"negative weight", []pool.Deployment{{Name: "a", Runnable: ok, Weight: -1}}, nil},
		{"zero allowed fails", []pool.Deployment{{Name: "a", Runnable: ok}}, []pool.Option{pool.WithCooldown(0, time.Minute, time.Second)}},
		{"zero cooldown", []pool.Deployment{{Name: "a", Runnable: ok}}, []pool.Option{pool.WithCooldown(3, time.Minute, 0)}},
		{"no share ejected", []pool.Deployment{{Name: "a", Runnable: ok}}, []pool.Option{pool.WithMaxEjected(0)}},
		{"more than all ejected", []pool.Deployment{{Name: "a", Runnable: ok}}, []pool.Option{pool.WithMaxEjected(1.5)}},
		{"NaN share ejected", []pool.Deployment{{Name: "a", Runnable: ok}}, []pool.Option{pool.WithMaxEjected(math.NaN())}},
	} {
		_, err := pool.New(tc.ds, tc.opts...)
		if err == nil {
			t.Errorf("%s: New() error = nil, want one", tc.name)
		} else if strings.Contains(tc.name, "ejected") && !strings.Contains(err.Error(), "WithMaxEjected") {
			t.Errorf("%s: New() error = %v, want it to name WithMaxEjected", tc.name, err)
		}
	}
}

// A failure on one deployment while another can serve reaches the retry
// layer as a hint of now: the retry goes to the other deployment at once,
// not after the backoff nor the 429's hint.
func TestRetryGoesToAnotherDeploymentAtOnce(t *testing.T) {
	for _, failure := range []error{err503, throttled(2 * time.Second)} {
		synctest.Test(t, func(t *testing.T) {
			a, b := mock.New(mock.Fail(failure), mock.OK("a")), mock.New(mock.OK("b"))
			// affinity puts the first attempt on a, whatever the draw
			p := newPool(t, []pool.Deployment{{Name: "a", Runnable: a}, {Name: "b", Runnable: b}},
				pool.WithAffinity(func(context.Context, any) string { return keyFor(t, "a", "a", "b") }))
			start := time.Now()
			out, err := retried(t, p).Invoke(t.Context(), "q")
			if err != nil || out != "b" {
				t.Fatalf("%v: Invoke() = %v, %v, want b", failure, out, err)
			}
			if time.Since(start) > time.Millisecond || a.CallCount() != 1 || b.CallCount() != 1 {
				t.Errorf("%v: took %v with calls a=%d b=%d, want at once, one call each", failure, time.Since(start), a.CallCount(), b.CallCount())
			}
		})
	}
}

// keyFor returns an affinity key whose rendezvous winner among equal
// weights is want.
func keyFor(t *testing.T, want string, names ...string) string {
	t.Helper()
	for i := range 1000 {
		key := "k" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		ds := make([]pool.Deployment, len(names))
		for j, n := range names {
			ds[j] = pool.Deployment{Name: n, Runnable: mock.Named(n, mock.New(mock.OK(n)))}
		}
		p, _ := pool.New(ds, pool.WithMeterProvider(noop.NewMeterProvider()),
			pool.WithAffinity(func(context.Context, any) string { return key }))
		if out, _ := p.Invoke(context.Background(), "q"); out == want {
			return key
		}
	}
	t.Fatal("no key found")
	return ""
}

// A server's hint cools its deployment for that long at once.
func TestServerHintCoolsTheDeployment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := mock.New(mock.Fail(throttled(2*time.Second)), mock.OK("a"))
		b := mock.New(mock.OK("b"))
		p := newPool(t, []pool.Deployment{{Name: "a", Runnable: a}, {Name: "b", Runnable: b}},
			pool.WithAffinity(func(context.Context, any) string { return keyFor(t, "a", "a", "b") }))
		if _, err := p.Invoke(t.Context(), "q"); err == nil {
			t.Fatal("first call on a: want its 429")
		}
		for range 10 {
			if out, err := p.Invoke(t.Context(), "q"); out != "b" || err != nil {
				t.Fatalf("while a cools: Invoke() = %v, %v, want b", out, err)
			}
		}
		time.Sleep(2 * time.Second)
		if out, _ := p.Invoke(t.Context(), "q"); out != "a" {
			t.Errorf("after the hint: Invoke() = %v, want a back", out)
		}
		if a.CallCount() != 2 {
			t.Errorf("calls to a = %d, want 2: none while it cooled", a.CallCount())
		}
	})
}

// allowedFails of a deployment's own failures within the window cool it
// for about the cooldown, once its peer has served enough beside it that
// chance does not explain the difference (a's failures times b's
// successes over 81, at 3 deviations); failures that are not its own
// never do.
func TestAllowedFailsCoolTheDeployment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := mock.New(mock.Fail(err503)), mock.New(mock.OK("b"))
		p := newPool(t, []pool.Deployment{{Name: "a", Runnable: a}, {Name: "b", Runnable: b}}, pool.WithCooldown(3, time.Minute, 5*time.Second))
		for range 60 {
			_, _ = p.Invoke(t.Context(), "q")
		}
		n := a.CallCount()
		if n < 3 || b.CallCount() == 0 {
			t.Fatalf("calls to a, b = %d, %d; want a cooled after 3 failures at least, beside b", n, b.CallCount())
		}
		for range 20 {
			if out, err := p.Invoke(t.Context(), "q"); out != "b" {
				t.Fatalf("while a cools: Invoke() = %v, %v; want b", out, err)
			}
		}
		if a.CallCount() != n {
			t.Fatalf("calls to a = %d, want %d: none while it cools", a.CallCount(), n)
		}
		time.Sleep(5 * time.Second) // the cooldown, less up to a tenth at random
		for range 50 {
			if a.CallCount() > n {
				break
			}
			_, _ = p.Invoke(t.Context(), "q")
		}
		if a.CallCount() != n+1 {
			t.Errorf("after the cooldown: calls = %d, want a called again", a.CallCount())
		}
	})
}

type localRefusal struct{}

func (localRefusal) Error() string { return "limited here" }
func (localRefusal) Local() bool   { return true }

func TestFailuresThatAreNotTheDeploymentsNeverCoolIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		for _, tc := range []struct {
			name string
			ctx  context.Context
			err  error
		}{
			{"caller's cancellation", ctx, context.Canceled},
			{"a local refusal", t.Context(), localRefusal{}},
			{"the request's fault", t.Context(), err400},
			{"a 422", t.Context(), &mock.HTTPError{Code: 422}},
		} {
			a := mock.New(mock.Fail(tc.err))
			p := newPool(t, []pool.Deployment{{Name: "a", Runnable: a}}, pool.WithCooldown(1, time.Minute, time.Hour))
			for range 5 {
				_, _ = p.Invoke(tc.ctx, "q")
			}
			if a.CallCount() != 5 {
				t.Errorf("%s: calls = %d, want 5: the deployment never cooled", tc.name, a.CallCount())
			}
		}
	})
}

// When every deployment cools down, the pool refuses at once with the
// wait until the first is back: retry waits exactly that.
func TestEveryDeploymentCoolingDownRefusesWithTheFirstReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := mock.New(mock.Fail(throttled(3*time.Second)), mock.OK("a"))
		b := mock.New(mock.Fail(throttled(2*time.Second)), mock.OK("b"))
		p := newPool(t, []pool.Deployment{{Name: "a", Runnable: a}, {Name: "b", Runnable: b}})
		start := time.Now()
		out, err := retried(t, p).Invoke(t.Context(), "q")
		// a's 429 moves the retry to b at once (a hint of now), b's cannot
		// move it anywhere: retry waits its hint, 2s, until b is back.
		if took := time.Since(start); err != nil || out != "b" || took < 2*time.Second || took > 2*time.Second+time.Millisecond {
			t.Errorf("Invoke() = %v, %v after %v; want b after 2s", out, err, took)
		}
	})
}

// With affinity, one key stays on one deployment while it can serve, goes
// elsewhere only while it cools, and comes back.
func TestAffinityKeepsAConversationOnOneDeployment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		names := []string{"a", "b", "c"}
		key := keyFor(t, "b", names...)
		b := mock.New(mock.OK("b"), mock.OK("b"), mock.Fail(throttled(time.Second)), mock.OK("b"))
		ds := []pool.Deployment{{Name: "a", Runnable: mock.New(mock.OK("a"))}, {Name: "b", Runnable: b}, {Name: "c", Runnable: mock.New(mock.OK("c"))}}
		p := newPool(t, ds, pool.WithAffinity(func(context.Context, any) string { return key }))
		var got []any
		for range 6 {
			out, _ := p.Invoke(t.Context(), "q")
			got = append(got, out)
		}
		other := got[3]
		if !slices.Equal(got[:2], []any{"b", "b"}) || got[2] != nil || other == "b" || got[4] != other {
			t.Errorf("answers = %v, want b b, the 429, then one other deployment while b cools", got)
		}
		time.Sleep(time.Second)
		if out, _ := p.Invoke(t.Context(), "q"); out != "b" {
			t.Errorf("after the cooldown: %v, want b again", out)
		}
	})
}

func TestBatchSpreadsItemsAndMergesByIndex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		echo := func(name string) core.Runnable {
			return core.RunnableFunc(func(_ context.Context, in any, _ ...core.Option) (any, error) {
				if in == 3 {
					return nil, err400
				}
				return in, nil
			})
		}
		p := newPool(t, []pool.Deployment{{Name: "a", Runnable: echo("a")}, {Name: "b", Runnable: echo("b")}},
			pool.WithAffinity(func(_ context.Context, in any) string { return string(rune('a' + in.(int))) }))
		outs, err := p.Batch(t.Context(), []any{0, 1, 2, 3, 4, 5})
		be, ok := errors.AsType[*core.BatchError](err)
		if !ok || be.Errs[3] == nil || batchcheck.Failed(be) != 1 {
			t.Fatalf("Batch() error = %v, want item 3's 400 alone", err)
		}
		if !slices.Equal(outs, []any{0, 1, 2, nil, 4, 5}) {
			t.Errorf("outs = %v, want the items merged by index", outs)
		}
	})
}

// A stream is served by one deployment, and resumed on the same one.
func TestStreamResumesOnTheDeploymentThatServedIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		drop := func(any) []mock.Fault { return []mock.Fault{{After: 2, Kind: mock.Drop}} }
		a, b := mock.NewResumable(4, 0, drop), mock.NewResumable(4, 0, drop)
		p := newPool(t, []pool.Deployment{{Name: "a", Runnable: a}, {Name: "b", Runnable: b}})
		cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Second, ResumeStreams: true}
		r, err := retry.New(p, cfg, quiet...)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := r.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		got := mock.Drain(ch)
		sa, ra := a.Counts()
		sb, rb := b.Counts()
		if !slices.Equal(got, []any{1, 2, 3, 4}) || sa+sb != 1 || ra+rb != 1 || sa != ra {
			t.Errorf("stream = %v; streams a=%d b=%d, resumes a=%d b=%d; want 1-4, resumed on the deployment that served it", got, sa, sb, ra, rb)
		}
	})
}

// The recommended composition under faults: fallback(retry(pool(breaker(d),
// ...)), retry(other)). Both deployments throttled for longer than the
// retry layer waits: the pool refuses locally, retry gives up, fallback
// moves on. A deployment that panics panics the call, on the caller's
// goroutine, and leaves nothing under way.
func TestPoolInTheRecommendedComposition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := func(r core.Runnable) core.Runnable {
			b, err := breaker.New(r, gobreaker.Settings{Name: "d"}, breaker.WithMeterProvider(noop.NewMeterProvider()))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		d1 := mock.New(mock.Fail(throttled(time.Hour)))
		d2 := mock.New(mock.Fail(throttled(time.Hour)))
		p := newPool(t, []pool.Deployment{{Name: "d1", Runnable: cb(d1)}, {Name: "d2", Runnable: cb(d2)}})
		other := mock.New(mock.OK("other model"))
		fb, err := fallback.New([]core.Runnable{retried(t, p), retried(t, other)},
			fallback.WithTracerProvider(tnoop.NewTracerProvider()), fallback.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := fb.Invoke(t.Context(), "q")
		if err != nil || out != "other model" || d1.CallCount() != 1 || d2.CallCount() != 1 {
			t.Errorf("Invoke() = %v, %v with calls d1=%d d2=%d; want the other model after one call each", out, err, d1.CallCount(), d2.CallCount())
		}

		panicky := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { panic("deployment") })
		pp := newPool(t, []pool.Deployment{{Name: "p", Runnable: panicky}})
		func() {
			defer func() {
				if v := recover(); v != "deployment" {
					t.Errorf("recovered %v, want the deployment's panic", v)
				}
			}()
			_, _ = retried(t, pp).Invoke(t.Context(), "q")
		}()
	})
}

// pool.deployment and the deployment's call attributes are on the retry
// layer's attempt span; pool.cooldowns counts each cooldown.
func TestTelemetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		a := mock.New(mock.Fail(throttled(time.Second)))
		p, err := pool.New([]pool.Deployment{{Name: "a", Runnable: a}, {Name: "b", Runnable: mock.New(mock.OK("b"))}},
			pool.WithMeterProvider(mp), pool.WithAffinity(func(context.Context, any) string { return keyFor(t, "a", "a", "b") }))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := retried(t, p, retry.WithTracerProvider(tp)).Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		var deployments []string
		events := 0
		for _, s := range rec.Ended() {
			if s.Name() != "retry.attempt" {
				continue
			}
			for _, kv := range s.Attributes() {
				if kv.Key == attribute.Key("pool.deployment") {
					deployments = append(deployments, kv.Value.AsString())
				}
			}
			for _, e := range s.Events() {
				if e.Name == "pool.cooldown" {
					events++
				}
			}
		}
		if !slices.Equal(deployments, []string{"a", "b"}) || events != 1 {
			t.Errorf("attempt spans' pool.deployment = %v with %d pool.cooldown events, want a then b and one", deployments, events)
		}
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(t.Context(), &rm); err != nil {
			t.Fatal(err)
		}
		var cooldowns int64
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name == "pool.cooldowns" {
					for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
						cooldowns += dp.Value
					}
				}
			}
		}
		if cooldowns != 1 {
			t.Errorf("pool.cooldowns = %d, want 1", cooldowns)
		}
	})
}

// A deployment's own limiter refusing (a Local refusal) sends the attempt
// elsewhere at once, and never cools the deployment.
func TestADeploymentsLimiterSendsTheCallElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim, err := ratelimit.New(mock.New(mock.OK("a")), ratelimit.InProcess(rate.NewLimiter(rate.Every(time.Hour), 1)),
			ratelimit.WithMaxWait(0), ratelimit.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		b := mock.New(mock.OK("b"))
		p := newPool(t, []pool.Deployment{{Name: "a", Runnable: lim}, {Name: "b", Runnable: b}},
			pool.WithCooldown(1, time.Minute, time.Hour),
			pool.WithAffinity(func(context.Context, any) string { return keyFor(t, "a", "a", "b") }))
		r := retried(t, p)
		start := time.Now()
		var got []any
		for range 3 {
			out, err := r.Invoke(t.Context(), "q")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, out)
		}
		if !slices.Equal(got, []any{"a", "b", "b"}) || time.Since(start) > time.Millisecond {
			t.Errorf("answers = %v after %v, want a, then b at once while a's limiter refuses", got, time.Since(start))
		}
	})
}

// Failures never take more of the deployments out of rotation than the
// share WithMaxEjected allows (half by default, one at least), and when
// every deployment fails together (a provider-wide outage, an overload of
// them all) none is an outlier: none is taken out.
func TestFailuresEjectAtMostTheShare(t *testing.T) {
	for _, tc := range []struct {
		name    string
		failing int
		share   float64 // WithMaxEjected, 0 for the default
		serving int     // deployments still called once the failures are known
	}{
		{"three of four failing", 3, 0, 2},
		{"all four failing", 4, 0, 4},
		{"three of four failing, any share ejected", 3, 1, 1},
		{"three of four failing, a quarter ejected", 3, 0.25, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var ds []pool.Deployment
				var mocks []*mock.Runnable
				for i, n := range []string{"a", "b", "c", "d"} {
					m := mock.New(mock.OK(n))
					if i < tc.failing {
						m = mock.New(mock.Fail(err503))
					}
					mocks = append(mocks, m)
					ds = append(ds, pool.Deployment{Name: n, Runnable: m})
				}
				opts := []pool.Option{pool.WithCooldown(1, time.Minute, time.Hour)}
				if tc.share > 0 {
					opts = append(opts, pool.WithMaxEjected(tc.share))
				}
				p := newPool(t, ds, opts...)
				call := func() {
					_, err := p.Invoke(t.Context(), "q")
					if _, unavailable := errors.AsType[*pool.UnavailableError](err); unavailable {
						t.Fatal("every deployment cooled down by failures alone")
					}
				}
				for range 400 { // enough calls that a failing one's rate is surely below the others' together
					call()
				}
				before := make([]int, len(mocks))
				for i, m := range mocks {
					before[i] = m.CallCount()
				}
				for range 40 {
					call()
				}
				serving := 0
				for i, m := range mocks {
					if m.CallCount() > before[i] {
						serving++
					}
				}
				if serving != tc.serving {
					t.Errorf("deployments still called = %d, want %d", serving, tc.serving)
				}
			})
		})
	}
}

// 400 failures at once over 4 deployments, trial after trial, never cool
// more than half of them: whether a failure may cool its deployment and
// the cooling are one decision.
func TestConcurrentFailuresCoolAtMostHalfTheDeployments(t *testing.T) {
	for trial := range 30 {
		var ds []pool.Deployment
		var mocks []*mock.Runnable
		for _, n := range []string{"a", "b", "c", "d"} {
			m := mock.New(mock.Fail(err503))
			mocks = append(mocks, m)
			ds = append(ds, pool.Deployment{Name: n, Runnable: m})
		}
		p := newPool(t, ds, pool.WithCooldown(1, time.Minute, time.Hour))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range 400 {
			wg.Go(func() {
				<-start
				_, _ = p.Invoke(t.Context(), "q")
			})
		}
		close(start)
		wg.Wait()
		before := make([]int, len(mocks))
		for i, m := range mocks {
			before[i] = m.CallCount()
		}
		for range 40 {
			_, err := p.Invoke(t.Context(), "q")
			if _, unavailable := errors.AsType[*pool.UnavailableError](err); unavailable {
				t.Fatalf("trial %d: every deployment cooled down by failures alone", trial)
			}
		}
		serving := 0
		for i, m := range mocks {
			if m.CallCount() > before[i] {
				serving++
			}
		}
		if serving < 2 {
			t.Fatalf("trial %d: deployments still serving after 400 concurrent failures = %d, want at least 2 of 4", trial, serving)
		}
	}
}

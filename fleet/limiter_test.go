package fleet_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/fleet"
	"github.com/steadfast-go/steadfast/ratelimit"
)

func newLimiter(t testing.TB, c redis.UniversalClient, key string, r rate.Limit, burst int, opts ...fleet.LimiterOption) *fleet.Limiter {
	t.Helper()
	l, err := fleet.NewLimiter(c, key, r, burst, append([]fleet.LimiterOption{fleet.WithLogger(quiet)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// unreachable is a client of a port nothing listens on.
func unreachable(t *testing.T) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestNewLimiterRejectsBadArguments(t *testing.T) {
	good := unreachable(t)
	noTimeouts := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer noTimeouts.Close()
	var nilClient *redis.Client
	for _, tc := range []struct {
		name   string
		client redis.UniversalClient
		key    string
		rate   rate.Limit
		burst  int
		opts   []fleet.LimiterOption
		want   string
	}{
		{"nil client", nil, "k", 1, 1, nil, "client is nil"},
		{"typed nil client", nilClient, "k", 1, 1, nil, "client is nil"},
		{"no context timeouts", noTimeouts, "k", 1, 1, nil, "ContextTimeoutEnabled"},
		{"empty key", good, "", 1, 1, nil, "key is empty"},
		{"zero rate", good, "k", 0, 1, nil, "rate is 0"},
		{"infinite rate", good, "k", rate.Inf, 1, nil, "rate is"},
		{"zero burst", good, "k", 1, 0, nil, "burst is 0"},
		{"zero share", good, "k", 1, 1, []fleet.LimiterOption{fleet.WithFallbackShare(0)}, "WithFallbackShare(0)"},
		{"share above 1", good, "k", 1, 1, []fleet.LimiterOption{fleet.WithFallbackShare(1.5)}, "WithFallbackShare(1.5)"},
		{"zero timeout", good, "k", 1, 1, []fleet.LimiterOption{fleet.WithTimeout(0)}, "WithTimeout(0s)"},
		{"brace outside a hash tag", good, "a}b", 1, 1, nil, `key "a}b" has a '}'`},
	} {
		_, err := fleet.NewLimiter(tc.client, tc.key, tc.rate, tc.burst, tc.opts...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewLimiter() error = %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}

// With Redis unreachable from the start, calls are decided locally with the
// limiter's share, the fall back is counted once and logged once, and no
// call fails.
func TestLimiterWithoutRedisDecidesLocally(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	l := newLimiter(t, unreachable(t), "k", 100, 10, fleet.WithFallbackShare(0.5),
		fleet.WithLogger(logger), fleet.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	rec := tracetest.NewSpanRecorder()
	ctx, span := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("test").Start(t.Context(), "call")
	admitted := 0
	for range 20 {
		if _, ok, err := parts(l.Reserve(ctx, 1, 0)); err != nil {
			t.Fatal(err)
		} else if ok {
			admitted++
		}
	}
	if !l.Degraded() {
		t.Error("Degraded() = false with Redis unreachable")
	}
	if admitted != 5 {
		t.Errorf("admitted %d at once, want 5: half the burst of 10", admitted)
	}
	span.End()
	if ev := rec.Ended()[0].Events(); len(ev) != 20 || ev[0].Name != "fleet.fallback" {
		t.Errorf("span events %v, want a fleet.fallback event for each of the 20 local decisions", ev)
	}
	if got := fallbacks(t, reader); got != 1 {
		t.Errorf("fleet.fallbacks = %d, want 1", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(logs.String(), "Redis unreachable"); n != 1 {
		t.Errorf("logged the fall back %d times, want once:\n%s", n, logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func fallbacks(t *testing.T, reader *sdkmetric.ManualReader) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "fleet.fallbacks" {
				for _, dp := range sum.DataPoints {
					n += dp.Value
				}
			}
		}
	}
	return n
}

// Two Limiters with one key draw from one bucket.
func TestLimitersShareTheBucket(t *testing.T) {
	c := client(t)
	key := uniqueKey(t)
	a := newLimiter(t, c, key, 0.001, 10) // no refill within the test
	b := newLimiter(t, c, key, 0.001, 10)
	admitted := 0
	for range 10 {
		for _, l := range []*fleet.Limiter{a, b} {
			if _, ok, err := parts(l.Reserve(t.Context(), 1, 0)); err != nil {
				t.Fatal(err)
			} else if ok {
				admitted++
			}
		}
	}
	if admitted != 10 {
		t.Errorf("two limiters admitted %d, want the burst of 10 between them", admitted)
	}
}

// Settling: tokens given back are admitted again, tokens taken beyond the
// estimate make the next call wait, and a call may queue for its turn.
func TestLimiterSettlesAndQueues(t *testing.T) {
	c := client(t)
	l := newLimiter(t, c, uniqueKey(t), 10, 100)
	ctx := t.Context()
	if _, ok, _ := parts(l.Reserve(ctx, 100, 0)); !ok {
		t.Fatal("a full bucket refused its burst")
	}
	l.Adjust(ctx, -60)
	if _, ok, _ := parts(l.Reserve(ctx, 55, 0)); !ok {
		t.Error("60 tokens given back, then 55 refused")
	}
	l.Adjust(ctx, 95) // 5 left, 95 more used: 90 in debt
	wait, ok, err := parts(l.Reserve(ctx, 10, 0))
	if ok || err != nil || wait < 9*time.Second || wait > 11*time.Second {
		t.Errorf("Reserve(10) after a debt of 90 at 10/s = %v, %v, %v; want a refusal to wait about 10s", wait, ok, err)
	}
	wait, ok, _ = parts(l.Reserve(ctx, 10, time.Minute))
	if !ok || wait < 9*time.Second {
		t.Errorf("Reserve(10, 1 min) = %v, %v; want a turn about 10s away", wait, ok)
	}
	if _, _, err := parts(l.Reserve(ctx, 101, time.Hour)); !overBurst(err) {
		t.Errorf("Reserve(101) error = %v, want a *ratelimit.LimitedError over the burst", err)
	}
}

// overBurst reports a refusal over the bucket's burst, which no wait admits.
func overBurst(err error) bool {
	le, ok := errors.AsType[*ratelimit.LimitedError](err)
	return ok && le.Burst > 0 && !le.Retryable()
}

package fleet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fleet"
	"github.com/steadfast-go/steadfast/ratelimit"
)

// answering answers "ok", or a 429 while over is set.
func answering(over *bool) core.Runnable {
	return core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
		if *over {
			return nil, tooMany{}
		}
		return "ok", nil
	})
}

type tooMany struct{}

func (tooMany) Error() string   { return "429 too many requests" }
func (tooMany) StatusCode() int { return 429 }

// replica is one process's fleet.Concurrency, with the reader of its
// limit gauge.
type replica struct {
	*fleet.Concurrency
	reader *sdkmetric.ManualReader
}

func newReplica(t *testing.T, c redis.UniversalClient, key string, inner core.Runnable, cfg ratelimit.ConcurrencyConfig) replica {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	cfg.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	r, err := fleet.NewConcurrency(c, key, inner, cfg, fleet.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return replica{r, reader}
}

// limit reads the replica's ratelimit.concurrency.limit gauge: its share.
func (r replica) limit(t *testing.T) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if g, ok := m.Data.(metricdata.Gauge[int64]); ok && m.Name == "ratelimit.concurrency.limit" {
				return g.DataPoints[0].Value
			}
		}
	}
	t.Fatal("no ratelimit.concurrency.limit gauge")
	return 0
}

// eventually waits up to two seconds for ok.
func eventually(ok func() bool) bool {
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return ok()
}

func TestNewConcurrencyRejectsBadArguments(t *testing.T) {
	good, inner := unreachable(t), answering(new(bool))
	for _, tc := range []struct {
		name   string
		client redis.UniversalClient
		key    string
		inner  core.Runnable
		cfg    ratelimit.ConcurrencyConfig
		want   string
	}{
		{"nil client", nil, "k", inner, ratelimit.ConcurrencyConfig{}, "client is nil"},
		{"empty key", good, "", inner, ratelimit.ConcurrencyConfig{}, "key is empty"},
		{"nil inner", good, "k", nil, ratelimit.ConcurrencyConfig{}, "inner Runnable is nil"},
		{"min above max", good, "k", inner, ratelimit.ConcurrencyConfig{Min: 5, Max: 2}, "Min is 5, above Max 2"},
		{"shared set", good, "k", inner, ratelimit.ConcurrencyConfig{Shared: fakeShared{}}, "Shared is set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := fleet.NewConcurrency(tc.client, tc.key, tc.inner, tc.cfg, fleet.WithLogger(quiet))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "NewConcurrency") {
				t.Errorf("NewConcurrency() = %v, %v; want an error of NewConcurrency saying %q", c, err, tc.want)
			}
		})
	}
}

type fakeShared struct{}

func (fakeShared) Observe(ratelimit.Outcome)      {}
func (fakeShared) Share() (float64, uint64, bool) { return 1, 0, true }

// Two replicas of one key share its limit, half each; a 429 at one cuts
// the fleet's limit, and so the other's share, once for the fleet.
func TestConcurrencyReplicasShareTheLimit(t *testing.T) {
	c := client(t)
	key := uniqueKey(t)
	over := false
	a := newReplica(t, c, key, answering(&over), ratelimit.ConcurrencyConfig{Initial: 20})
	b := newReplica(t, c, key, answering(new(bool)), ratelimit.ConcurrencyConfig{Initial: 20})
	if _, err := b.Invoke(t.Context(), "q"); err != nil { // reads b's share
		t.Fatal(err)
	}
	if !eventually(func() bool {
		a.Invoke(t.Context(), "q")
		b.Invoke(t.Context(), "q")
		return b.limit(t) == 10 && a.limit(t) == 10
	}) {
		t.Fatalf("shares %d and %d; want 10 each: 20 between two replicas", a.limit(t), b.limit(t))
	}
	over = true
	for range 3 { // one burst of 429s: one cut, 20 × 0.7 = 14
		if _, err := a.Invoke(t.Context(), "q"); err == nil {
			t.Fatal("a 429 answered nil")
		}
	}
	if !eventually(func() bool { b.Invoke(t.Context(), "q"); return b.limit(t) == 7 }) {
		t.Errorf("b's share %d after a's 429s; want 7: the fleet's 20 cut once to 14, between two", b.limit(t))
	}
	if a.Degraded() || b.Degraded() {
		t.Error("a replica fell back with Redis up")
	}
}

// Without Redis, a Concurrency adapts its limit alone, calls go through,
// and Close still ends its goroutine (goleak checks).
func TestConcurrencyWithoutRedisDecidesLocally(t *testing.T) {
	r := newReplica(t, unreachable(t), "k", answering(new(bool)), ratelimit.ConcurrencyConfig{Initial: 4})
	if !eventually(r.Degraded) {
		t.Fatal("Degraded() = false with Redis unreachable")
	}
	for range 3 {
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.limit(t); got != 4 {
		t.Errorf("limit %d; want Initial's 4, adapted here", got)
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
}

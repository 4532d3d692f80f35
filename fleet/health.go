package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the OpenTelemetry instrumentation scope of the meter.
const ScopeName = "github.com/steadfast-go/steadfast/fleet"

// Attributes of the fleet.fallbacks counter.
const (
	// AttrComponent is "limiter" or "budget".
	AttrComponent = attribute.Key("fleet.component")
	// AttrKey is the Redis key the Limiter or Budget was given.
	AttrKey = attribute.Key("fleet.key")
)

// probeEvery is how long a Limiter decides locally after Redis failed it,
// before one call tries Redis again: short, so that the replicas of a fleet
// come back to the shared bucket within a tenth of a second of each other
// (a replica still deciding locally spends its share unseen by the shared
// bucket), and a probe that finds Redis still away costs one bounded call.
const probeEvery = 100 * time.Millisecond

// health tracks whether Redis answers, for one Limiter or Budget: it logs
// each change once and counts each fall back.
type health struct {
	down    atomic.Bool
	probing atomic.Bool
	retryAt atomic.Int64 // unix nanoseconds: when a call may probe Redis again

	logger    *slog.Logger
	fallbacks metric.Int64Counter
	attrs     metric.MeasurementOption
	component string
	key       string
	onDown    func() // called once each time Redis is found unreachable
	onUp      func() // called once each time Redis answers again
}

func newHealth(c config, component, key string) (*health, error) {
	mp := c.mp
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	counter, err := mp.Meter(ScopeName, metric.WithInstrumentationVersion(version)).Int64Counter(
		"fleet.fallbacks",
		metric.WithDescription("Times a fleet Limiter or Budget fell back to in-process decisions because Redis was unreachable."),
		metric.WithUnit("{fallback}"))
	if err != nil {
		return nil, fmt.Errorf("fleet: metric fleet.fallbacks: %w", err)
	}
	return &health{
		logger: c.logger, fallbacks: counter, component: component, key: key,
		attrs: metric.WithAttributeSet(attribute.NewSet(AttrComponent.String(component), AttrKey.String(key))),
	}, nil
}

// local reports whether a call should decide locally: while Redis is down,
// except for one call every probeEvery, which probes it.
func (h *health) local() bool {
	if !h.down.Load() {
		return false
	}
	if time.Now().UnixNano() < h.retryAt.Load() || !h.probing.CompareAndSwap(false, true) {
		return true
	}
	return false
}

// traceLocal marks on the caller's span that a decision was made locally,
// Redis being unreachable.
func (h *health) traceLocal(ctx context.Context) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("fleet.fallback", trace.WithAttributes(AttrComponent.String(h.component), AttrKey.String(h.key)))
	}
}

// ok records that Redis answered.
func (h *health) ok() {
	h.probing.Store(false)
	if h.down.Load() && h.down.CompareAndSwap(true, false) {
		if h.onUp != nil {
			h.onUp()
		}
		h.logger.Info("fleet: Redis answers again; deciding with the fleet",
			"component", h.component, "key", h.key)
	}
}

// failed records that Redis did not answer.
func (h *health) failed(err error) {
	h.retryAt.Store(time.Now().Add(probeEvery).UnixNano())
	h.probing.Store(false)
	if !h.down.Load() && h.down.CompareAndSwap(false, true) {
		if h.onDown != nil {
			h.onDown()
		}
		h.fallbacks.Add(context.Background(), 1, h.attrs)
		h.logger.Warn("fleet: Redis unreachable; deciding locally until it answers",
			"component", h.component, "key", h.key, "error", err)
	}
}

// checkClient reports a nil client, and one whose context deadlines do not
// bound its calls: without ContextTimeoutEnabled, go-redis waits its own
// read timeout (3 s by default) on a Redis that stopped answering.
func checkClient(fn string, client redis.UniversalClient) error {
	var enabled, known bool
	switch c := client.(type) {
	case nil:
		return fmt.Errorf("fleet: %s: Redis client is nil", fn)
	case *redis.Client:
		if c == nil {
			return fmt.Errorf("fleet: %s: Redis client is nil", fn)
		}
		enabled, known = c.Options().ContextTimeoutEnabled, true
	case *redis.ClusterClient:
		if c == nil {
			return fmt.Errorf("fleet: %s: Redis client is nil", fn)
		}
		enabled, known = c.Options().ContextTimeoutEnabled, true
	case *redis.Ring:
		if c == nil {
			return fmt.Errorf("fleet: %s: Redis client is nil", fn)
		}
		enabled, known = c.Options().ContextTimeoutEnabled, true
	}
	if known && !enabled {
		return fmt.Errorf("fleet: %s: the Redis client's options must set ContextTimeoutEnabled, so that fleet's timeouts bound its calls", fn)
	}
	return nil
}

func checkCommon(fn, key string, c config) error {
	switch {
	case key == "":
		return fmt.Errorf("fleet: %s: key is empty", fn)
	case c.timeout <= 0:
		return fmt.Errorf("fleet: %s: WithTimeout(%v): must be positive", fn, c.timeout)
	}
	return nil
}

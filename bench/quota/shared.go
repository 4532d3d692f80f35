package quota

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/fleet"
)

// Shared gives every replica the fleet module's bucket in the Redis at
// addr, each through a client of its own, as separate processes would.
func Shared(addr string) Limiter {
	key := fmt.Sprintf("bench-quota-%d", time.Now().UnixNano())
	runs := 0
	return Limiter{"shared (Redis)", func(sc Scenario, replica int) (Replica, error) {
		if replica == 0 {
			runs++ // a fresh bucket for each run
		}
		c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
		l, err := fleet.NewLimiter(c, fmt.Sprintf("%s-%d", key, runs), rate.Limit(sc.Quota), int(sc.Quota),
			fleet.WithFallbackShare(1/float64(sc.Replicas)), fleet.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			c.Close()
			return Replica{}, err
		}
		return Replica{Backend: l, Degraded: l.Degraded, Close: func() { c.Close() }}, nil
	}}
}

package fleet

import (
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// testRedis is a client of the Redis at REDIS_ADDR, closed when t ends;
// without one the test is skipped, or fails in CI.
func testRedis(t *testing.T) *redis.Client {
	t.Helper()
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("REDIS_ADDR is not set: the fleet tests need Redis (.ci/run starts one)")
		}
		t.Skip("REDIS_ADDR is not set: the fleet tests need Redis. Start one and run REDIS_ADDR=localhost:6390 go test ./... in fleet/, or run .ci/run")
	}
	rc := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rc.Close() })
	return rc
}

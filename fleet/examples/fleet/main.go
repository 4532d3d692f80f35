// Command fleet shows replicas of one service sharing an LLM provider's
// tokens-per-minute quota through Redis: four replicas, two of them busy,
// each limiting itself with a fleet.Limiter on the same key and retrying
// through one fleet.Budget per replica. The provider answers 429 past its
// quota. The example prints each replica's throughput and 429s, and the
// fleet's.
//
//	REDIS_ADDR=localhost:6379 go run ./examples/fleet
//	go run ./examples/fleet     # starts a throw-away redis-server, if one is installed
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fleet"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

const (
	quotaPerMinute = 600_000 // tokens
	replicas       = 4
	run            = 6 * time.Second
	warmUp         = 2 * time.Second // the buckets start full: count from when they have settled
	maxAnswer      = 400             // the answer's cap, in tokens
	meanUse        = 425             // tokens a call uses on average: a prompt of 100-300, an answer of 50-400
	offered        = 2.0             // the load offered, as a multiple of the quota
)

func main() {
	addr, stop, err := redisAddr()
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	stats := make([]replicaStats, replicas)
	end := time.Now().Add(run)
	provider := newProvider(quotaPerMinute, end.Add(warmUp-run), end, stats)
	key := fmt.Sprintf("example-%d", time.Now().UnixNano())
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	for i := range replicas {
		// Replicas 0 and 1 get 40 % of the calls each, the others 10 %.
		share := 0.1
		if i < 2 {
			share = 0.4
		}
		wg.Go(func() { errs[i] = replica(i, addr, key, provider, share, end, &stats[i]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		log.Fatal(err)
	}

	var total replicaStats
	for i := range stats {
		s := &stats[i]
		fmt.Printf("replica %d: %3d calls, %6d tokens served, %2d refused locally, %d answered 429\n",
			i, s.calls.Load(), s.tokens.Load(), s.refused.Load(), s.throttled.Load())
		total.calls.Add(s.calls.Load())
		total.tokens.Add(s.tokens.Load())
		total.refused.Add(s.refused.Load())
		total.throttled.Add(s.throttled.Load())
	}
	fmt.Printf("fleet:     %3d calls, %6d tokens served, %2d refused locally, %d answered 429\n",
		total.calls.Load(), total.tokens.Load(), total.refused.Load(), total.throttled.Load())
	allowed := int((run - warmUp).Minutes() * quotaPerMinute)
	fmt.Printf("from %v to %v the quota allowed %d tokens: %.0f %% used\n",
		warmUp, run, allowed, 100*float64(total.tokens.Load())/float64(allowed))
}

type replicaStats struct{ calls, tokens, refused, throttled atomic.Int64 }

// replica is one process of the service: its own Redis client, the shared
// limiter and budget, and calls arriving at random at its share of the
// load.
func replica(id int, addr, key string, provider core.Runnable, share float64, end time.Time, s *replicaStats) error {
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer client.Close()
	quiet := fleet.WithLogger(slog.New(slog.DiscardHandler))
	lim, err := fleet.NewLimiter(client, key, rate.Limit(quotaPerMinute/60.0), quotaPerMinute/60,
		fleet.WithFallbackShare(1.0/replicas), quiet)
	if err != nil {
		return err
	}
	budget, err := fleet.NewBudget(client, key, quiet)
	if err != nil {
		return err
	}
	defer budget.Close()
	// The limiter inside the retry layer: every attempt takes its tokens.
	// A call is estimated at its prompt plus the answer's cap, and settled
	// on the usage the answer reports. It waits at most half a second for
	// its tokens, leaving the rest of its deadline for the answer.
	llm := core.Chain(provider,
		retry.Middleware(retry.DefaultRetryConfig(), retry.WithBudget(budget)),
		ratelimit.Middleware(lim, ratelimit.WithMaxWait(500*time.Millisecond),
			ratelimit.WithCost(func(in any) int { return in.(prompt).tokens + maxAnswer }),
			ratelimit.WithUsage(func(out any) int { return out.(answer).usage })))

	rng := rand.New(rand.NewPCG(uint64(id), 1))
	callsPerSecond := share * offered * quotaPerMinute / 60 / meanUse
	var wg sync.WaitGroup
	defer wg.Wait()
	for next := time.Now(); ; {
		next = next.Add(time.Duration(rng.ExpFloat64() / callsPerSecond * float64(time.Second)))
		if next.After(end) {
			return nil
		}
		time.Sleep(time.Until(next))
		p := prompt{replica: id, tokens: 100 + rng.IntN(201), answer: 50 + rng.IntN(maxAnswer-49)}
		s.calls.Add(1)
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if _, err := llm.Invoke(ctx, p); errors.Is(err, ratelimit.ErrLimited) {
				s.refused.Add(1) // its turn would have come after its deadline
			}
		})
	}
}

// prompt and answer are the calls' input and output, sized in tokens.
type (
	prompt struct{ replica, tokens, answer int }
	answer struct{ usage int }
)

// errQuota is the provider's 429.
type errQuota struct{}

func (errQuota) Error() string             { return "429: tokens per minute exceeded" }
func (errQuota) StatusCode() int           { return 429 }
func (errQuota) RetryAfter() time.Duration { return 100 * time.Millisecond }

// newProvider is an LLM provider that serves a call when its quota holds
// the tokens the call uses, and answers 429 otherwise. It counts the tokens
// it serves from from to end.
func newProvider(perMinute int, from, end time.Time, stats []replicaStats) core.Runnable {
	quota := rate.NewLimiter(rate.Limit(perMinute/60), perMinute/60)
	return core.RunnableFunc(func(ctx context.Context, in any, _ ...core.Option) (any, error) {
		p := in.(prompt)
		used := p.tokens + p.answer
		if !quota.AllowN(time.Now(), used) {
			stats[p.replica].throttled.Add(1)
			return nil, errQuota{}
		}
		if now := time.Now(); !now.Before(from) && now.Before(end) {
			stats[p.replica].tokens.Add(int64(used))
		}
		select {
		case <-time.After(30 * time.Millisecond):
			return answer{usage: used}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
}

// redisAddr returns REDIS_ADDR, or starts a throw-away redis-server on a
// free port and returns its address and a function stopping it.
func redisAddr() (string, func(), error) {
	if addr := os.Getenv("REDIS_ADDR"); addr != "" {
		return addr, func() {}, nil
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		return "", nil, errors.New("set REDIS_ADDR to a Redis server, or install redis-server (apt-get install redis-server)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	dir, err := os.MkdirTemp("", "steadfast-redis-")
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = os.RemoveAll(dir)
	}
	addr := "127.0.0.1:" + port
	for range 100 {
		if c, err := net.DialTimeout("tcp", addr, 50*time.Millisecond); err == nil {
			c.Close()
			fmt.Println("started redis-server on", addr)
			return addr, stop, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("redis-server on %s did not start", addr)
}

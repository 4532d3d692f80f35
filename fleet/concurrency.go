package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/ratelimit"
)

// Concurrency is a ratelimit.Concurrency whose limit the replicas of a
// fleet find together, in Redis: every replica's calls' outcomes go to
// one limit, by the arithmetic of ratelimit's own (an overload anywhere
// cuts it once for the fleet; clean answers anywhere raise it), and each
// replica may have its share of it in flight: the limit divided among
// the replicas that reached Redis within the last second, the whole calls
// of the limit dealt out so that the shares add up to it. A replica
// always has at least one call in flight, however small its share.
//
// An overload cuts the limit again only once the fleet's calls in flight
// (each replica's, as it last said) have come down to it: the calls the
// replicas sent before they heard of a cut are the same burst's. After
// any cut but a probe's first (which takes a call or so), until they
// have, each replica's share is its part of the limit in proportion to
// the calls it holds, so that none sends while others still hold what
// the cut took.
//
// It exchanges with Redis every tenth of a second from a goroutine of its
// own, which Close ends, at once after an overload here, and at once
// when another replica's overload cut the limit: it holds a connection
// of its own subscribed to the limit's cuts, so that every replica takes
// its smaller share within a round trip. It makes no Redis round trip on
// a call's path. Redis is never a new way to fail: while it cannot be
// reached, the replica adapts its limit alone, from its last share,
// counted in the fleet.fallbacks metric (component "concurrency"), and
// takes the shared limit again when Redis answers.
type Concurrency struct {
	*ratelimit.Concurrency
	s *sharedLimit
}

// NewConcurrency returns inner behind a limit on calls in flight shared by
// every process that names the same key on client's Redis, configured by
// c as ratelimit.NewConcurrency's (Initial, Min and Max are the fleet's
// limit's: the first replica to reach Redis sets it at Initial). c.Shared
// must be nil: NewConcurrency sets it. Its options are WithTimeout,
// WithLogger and WithMeterProvider. It reports an error naming the problem
// when client, key, inner or c is invalid. Close it when done.
func NewConcurrency(client redis.UniversalClient, key string, inner core.Runnable, c ratelimit.ConcurrencyConfig, opts ...Option) (*Concurrency, error) {
	lopts := make([]LimiterOption, len(opts))
	for i, o := range opts {
		lopts[i] = o
	}
	cfg := limiterConfig(lopts)
	if err := checkClient("NewConcurrency", client); err != nil {
		return nil, err
	}
	if err := checkCommon("NewConcurrency", key, cfg); err != nil {
		return nil, err
	}
	if c.Shared != nil {
		return nil, errors.New("fleet: NewConcurrency: ConcurrencyConfig.Shared is set; NewConcurrency sets it")
	}
	h, err := newHealth(cfg, "concurrency", key)
	if err != nil {
		return nil, err
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	tag := "steadfast:concurrency:{" + key + "}"
	s := &sharedLimit{
		client: client, keys: []string{tag + ":limit", tag + ":procs", tag + ":inflight"},
		id:      fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(id[:])),
		timeout: cfg.timeout, h: h,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	s.min, s.max, s.initial = limits(c)
	c.Shared = s
	r, err := ratelimit.NewConcurrency(inner, c)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	s.exchange() // the shared limit from the first call on, if Redis answers
	cuts := client.Subscribe(context.Background(), s.keys[0])
	go s.run(syncEvery, cuts)
	return &Concurrency{Concurrency: r, s: s}, nil
}

// limits are c's Min, Max and Initial with ratelimit.ConcurrencyConfig's
// defaults, once ratelimit.NewConcurrency has checked them.
func limits(c ratelimit.ConcurrencyConfig) (lo, hi, initial float64) {
	l, h := max(c.Min, 1), c.Max
	if h == 0 {
		h = max(1000, l)
	}
	i := c.Initial
	if i == 0 {
		i = min(max(8, l), h)
	}
	return float64(l), float64(h), float64(i)
}

// Close stops the exchanges with Redis; the Concurrency then adapts its
// limit alone, from its last share. It returns nil, and may be called more than once.
func (c *Concurrency) Close() error {
	c.s.closeOnce.Do(func() {
		c.s.closed.Store(true)
		close(c.s.stop)
	})
	<-c.s.done
	return nil
}

// Degraded reports whether Redis was unreachable at the last exchange,
// so that the limit is this replica's own.
func (c *Concurrency) Degraded() bool { return c.s.h.down.Load() }

// sharedLimit is the ratelimit.SharedLimit a Concurrency keeps in Redis.
type sharedLimit struct {
	client  redis.UniversalClient
	keys    []string
	id      string
	timeout time.Duration
	h       *health

	min, max, initial float64
	share             atomic.Pointer[share] // nil until Redis first answers
	closed            atomic.Bool

	mu      sync.Mutex
	pending []ratelimit.Outcome // not yet sent
	held    float64             // the cost in flight, as the last outcome said

	// kick asks for an exchange before the next tick: an overload's,
	// so that the fleet cuts its limit at once rather than a tick late.
	kick      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// share is this process's part of the fleet's limit, and the limit's cuts.
type share struct {
	limit float64
	epoch uint64
}

// Concurrency's store and its rules: a process counts as sharing the
// limit for a second after its last exchange; at most maxPending outcomes
// wait for the next exchange beyond overloads, which are always kept, and
// exchange at once, but at most once every minKick.
const (
	live       = time.Second
	maxPending = 4096
	minKick    = 10 * time.Millisecond
)

// syncEvery is the exchanges' tick; a test sets it longer, to see a cut
// reach a replica by its subscription alone.
var syncEvery = defaultSyncInterval

var _ ratelimit.SharedLimit = (*sharedLimit)(nil)

// Observe implements ratelimit.SharedLimit: the outcome waits for the
// next exchange.
func (s *sharedLimit) Observe(o ratelimit.Outcome) {
	s.mu.Lock()
	if len(s.pending) < maxPending || o.Overload {
		s.pending = append(s.pending, o)
	}
	s.held = o.InFlight
	s.mu.Unlock()
	if o.Overload {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// Share implements ratelimit.SharedLimit: one atomic load, and one for
// whether Redis answers.
func (s *sharedLimit) Share() (float64, uint64, bool) {
	sh := s.share.Load()
	if sh == nil || s.h.down.Load() || s.closed.Load() {
		return 0, 0, false
	}
	return sh.limit, sh.epoch, true
}

// run exchanges every interval, at once after an overload here, and at
// once when another replica's exchange cut the limit (cuts, a
// subscription to the limit's channel), so that every replica stops
// sending what the fleet can no longer take within a round trip of the
// cut, rather than up to a tick later. It ends cuts when it ends.
func (s *sharedLimit) run(interval time.Duration, cuts *redis.PubSub) {
	defer close(s.done)
	defer cuts.Close()
	t := time.NewTicker(interval)
	defer t.Stop()
	cut := cuts.Channel()
	var last time.Time
	var soon <-chan time.Time // a kick's exchange, once minKick has passed
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-soon:
		case <-s.kick:
		case _, ok := <-cut:
			if !ok { // the client was closed: the ticks go on, and fail
				cut = nil
			}
		}
		if wait := minKick - time.Since(last); wait > 0 {
			if soon == nil {
				soon = time.After(wait)
			}
			continue
		}
		soon = nil
		last = time.Now()
		s.exchange()
	}
}

// exchange sends the outcomes since the last one and takes this
// process's share of the limit.
func (s *sharedLimit) exchange() {
	s.mu.Lock()
	batch, held := s.pending, s.held
	s.pending = nil
	s.mu.Unlock()
	args := make([]any, 0, 7+8*len(batch))
	args = append(args, s.id, s.min, s.max, s.initial, live.Milliseconds(), held, len(batch))
	for _, o := range batch {
		args = append(args, o.Cost, flag(o.Overload), int64(o.Hint), flag(o.Clean), int64(o.TTFT), o.Epoch, flag(o.Saturated), o.InFlight)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	a, err := runAIMD(ctx, s.client, s.keys, args)
	if err != nil {
		s.h.failed(err)
		return
	}
	s.share.Store(&share{limit: a.share, epoch: a.epoch})
	s.h.ok()
}

// answer is aimdScript's: the fleet's limit, its epoch and step, the
// processes sharing it and the caller's share.
type answer struct {
	limit, step, share float64
	epoch              uint64
	procs              int64
}

// runAIMD runs aimdScript and parses its answer.
func runAIMD(ctx context.Context, client redis.UniversalClient, keys []string, args []any) (answer, error) {
	res, err := aimdScript.Run(ctx, client, keys, args...).Slice()
	if err != nil {
		return answer{}, err
	}
	if len(res) != 5 {
		return answer{}, fmt.Errorf("fleet: the concurrency script answered %v", res)
	}
	text := func(v any) string { s, _ := v.(string); return s }
	var a answer
	var err1, err2, err3 error
	a.limit, err1 = strconv.ParseFloat(text(res[0]), 64)
	epoch, err2 := strconv.ParseFloat(text(res[1]), 64)
	a.step, err3 = strconv.ParseFloat(text(res[2]), 64)
	procs, ok1 := res[3].(int64)
	share, ok2 := res[4].(int64)
	if err := errors.Join(err1, err2, err3); err != nil || !ok1 || !ok2 {
		return answer{}, fmt.Errorf("fleet: the concurrency script answered %v: %w", res, err)
	}
	a.epoch, a.procs, a.share = uint64(epoch), procs, float64(share)
	return a, nil
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

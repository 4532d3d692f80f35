package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/steadfast-go/steadfast/budget"
	"github.com/steadfast-go/steadfast/core"
)

// Budget is a retry.Budget shared by a fleet: the law of package budget
// (retry.RecommendedBudget's), run by a Redis script over the whole
// fleet's answers. Every attempt is refused here with the probability
// that the fleet's counts give,
//
//	p = max(0, (requests − K·accepts − Padding) / (requests + Padding))
//
// and retries go at Ratio of the fleet's first attempts a second plus
// Floor, each process pacing its retries at its part of that rate, in
// proportion to its first attempts. An outage seen by eight replicas is thus held to one
// budget's retries, not eight, and a collapse is throttled by what the
// whole fleet sends and the provider accepts. The script passes the
// vectors of package budget's testdata/law.json, as the Go law does.
//
// No Redis round trip is on a call's path: answers are counted in memory,
// and a goroutine of the Budget's own exchanges the counts with Redis every
// sync interval. While Redis cannot be reached, the Budget runs the law
// over this process's answers alone (a budget.Adaptive that has counted
// them all along), through the same token bucket, so that turns already
// promised count on both sides of the change. Close ends the goroutine.
// It is safe for concurrent use; share one per provider in each process.
type Budget struct {
	client  redis.UniversalClient
	keys    []string
	id      string
	timeout time.Duration
	s       budget.Setting
	h       *health
	local   *budget.Adaptive

	requests, accepts, firsts atomic.Int64  // answers counted, in all
	throttle                  atomic.Uint64 // the fleet's throttle, as float64 bits

	mu     sync.Mutex
	pace   *budget.Pacer // the law's token bucket, at this process's part of the fleet's rate
	pushed counts        // the counts Redis has had
	rate   float64       // the fleet's retries a second, as of the last exchange
	firstN int64         // the fleet's first attempts over the window, as of the last exchange
	procs  int64         // processes that exchanged within the window
	mine   []int64       // this process's first attempts sent at each of the last exchanges
	next   int           // the oldest entry of mine

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type counts struct{ requests, accepts, firsts int64 }

// lawSlots is how many slots the window of package budget's law holds.
const lawSlots = 10

// NewBudget returns a Budget over the Redis keys "steadfast:budget:{key}"
// and starts its goroutine; Close it when done. Every process calling one
// provider should use the same key and setting (WithSetting; by default
// budget.DefaultSetting, retry.RecommendedBudget's). Redis need not be
// reachable yet. It reports an error naming the first bad argument.
func NewBudget(client redis.UniversalClient, key string, opts ...BudgetOption) (*Budget, error) {
	c := budgetConfig(opts)
	if err := checkClient("NewBudget", client); err != nil {
		return nil, err
	}
	if err := checkCommon("NewBudget", key, c); err != nil {
		return nil, err
	}
	s := budget.DefaultSetting()
	if c.setting != nil {
		s = *c.setting
	}
	local, err := budget.NewAdaptive(s)
	if err != nil {
		return nil, fmt.Errorf("fleet: NewBudget: WithSetting: %w", err)
	}
	pace, _ := budget.NewPacer(s) // checked by NewAdaptive
	if c.syncInterval <= 0 || c.syncInterval > s.Window {
		return nil, fmt.Errorf("fleet: NewBudget: WithSyncInterval(%v): must be positive and at most the window, %v", c.syncInterval, s.Window)
	}
	h, err := newHealth(c, "budget", key)
	if err != nil {
		return nil, err
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	tag := "steadfast:budget:{" + key + "}"
	b := &Budget{
		client: client, keys: []string{tag + ":counts", tag + ":procs"},
		id:      fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(id[:])),
		timeout: c.timeout, s: s, h: h, local: local, pace: pace,
		rate:  s.Floor,
		mine:  make([]int64, int((s.Window+c.syncInterval-1)/c.syncInterval)),
		procs: 1,
		stop:  make(chan struct{}), done: make(chan struct{}),
	}
	go b.run(c.syncInterval)
	return b, nil
}

// Close stops the exchanges with Redis and waits for the goroutine to end.
// The Budget still answers afterwards, from what it last learnt. Close
// always returns nil.
func (b *Budget) Close() error {
	b.closeOnce.Do(func() { close(b.stop) })
	<-b.done
	return nil
}

// Degraded reports whether the Budget runs the law on this process's
// answers alone because Redis did not answer.
func (b *Budget) Degraded() bool { return b.h.down.Load() }

// RecordAttempt counts the answer to attempt n (1 for a first attempt),
// for the fleet and for this process.
func (b *Budget) RecordAttempt(ctx context.Context, n int, accepted bool) {
	b.local.RecordAttempt(ctx, n, accepted)
	b.requests.Add(1)
	if accepted {
		b.accepts.Add(1)
	}
	if n <= 1 {
		b.firsts.Add(1)
	}
}

// Throttle returns the probability with which an attempt is refused now: the fleet's, or this process's while Redis is unreachable.
func (b *Budget) Throttle() float64 {
	if b.h.down.Load() {
		return b.local.Throttle()
	}
	return math.Float64frombits(b.throttle.Load())
}

// Reserve takes attempt n's turn. Any attempt is refused with the
// throttle's probability (Throttle); a first attempt that is not goes. A
// retry that is not takes a token of the
// bucket, at this process's part of the fleet's rate, or, while Redis is
// unreachable, at the in-process law's rate: the wait until it is due, or
// a refusal when that would be longer than maxWait or the setting's
// MaxWait; its Cancel gives the token back. One bucket serves both ways of
// deciding, so that the turns it has promised count across a Redis
// outage's both edges instead of each side starting afresh.
func (b *Budget) Reserve(ctx context.Context, n int, maxWait time.Duration) core.Reservation {
	down := b.h.down.Load()
	if down {
		b.h.traceLocal(ctx)
	}
	if p := b.Throttle(); p > 0 && mrand.Float64() < p {
		return core.Reservation{}
	}
	if n <= 1 {
		return core.Reservation{OK: true}
	}
	now := time.Now()
	var rate float64
	if down {
		rate = b.local.Rate()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !down {
		rate = b.part()
	}
	res := b.pace.Reserve(now, rate, maxWait)
	if giveBack := res.Cancel; giveBack != nil {
		res.Cancel = func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			giveBack()
		}
	}
	return res
}

// part is this process's part of the fleet's retry rate, in proportion to
// its first attempts over the window. It runs under b.mu.
func (b *Budget) part() float64 {
	share := 1 / float64(max(b.procs, 1))
	if b.firstN > 0 {
		var mine int64
		for _, n := range b.mine {
			mine += n
		}
		share = min(float64(mine)/float64(b.firstN), 1)
	}
	return b.rate * share
}

// run exchanges the counts with Redis every interval until Close.
func (b *Budget) run(interval time.Duration) {
	defer close(b.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		b.exchange()
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
	}
}

// exchange sends the counts made since the last exchange and learns the
// fleet's law. Counts that fail to reach Redis are dropped, not sent
// later: by then they would be out of the window and would only inflate
// it.
func (b *Budget) exchange() {
	cur := counts{b.requests.Load(), b.accepts.Load(), b.firsts.Load()}
	b.mu.Lock()
	d := counts{cur.requests - b.pushed.requests, cur.accepts - b.pushed.accepts, cur.firsts - b.pushed.firsts}
	b.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	law, err := runLaw(ctx, b.client, b.keys, b.s, d, b.id, "")

	b.mu.Lock()
	b.pushed = cur
	b.mine[b.next] = d.firsts
	b.next = (b.next + 1) % len(b.mine)
	if err == nil {
		b.rate, b.firstN, b.procs = law.rate, law.firsts, law.procs
		b.throttle.Store(math.Float64bits(law.throttle))
	}
	b.mu.Unlock()
	if err != nil {
		b.h.failed(err)
		return
	}
	b.h.ok()
}

// lawAnswer is what the budget script answers: the fleet's law over its
// window, and how many processes exchanged within it.
type lawAnswer struct {
	throttle, rate float64
	firsts, procs  int64
}

// runLaw adds d, one process's answers, to the fleet's counts and returns
// the law over the window; now is the time in milliseconds ("": Redis's
// clock), for the vectors.
func runLaw(ctx context.Context, c redis.UniversalClient, keys []string, s budget.Setting, d counts, id, now string) (lawAnswer, error) {
	res, err := lawScript.Run(ctx, c, keys, d.requests, d.accepts, d.firsts, id,
		(s.Window / lawSlots).Milliseconds(), lawSlots, s.K, s.Ratio, s.Floor, now, s.Padding).StringSlice()
	if err != nil {
		return lawAnswer{}, err
	}
	if len(res) != 4 {
		return lawAnswer{}, fmt.Errorf("fleet: the budget script answered %v", res)
	}
	var a lawAnswer
	var errs [4]error
	a.throttle, errs[0] = strconv.ParseFloat(res[0], 64)
	a.rate, errs[1] = strconv.ParseFloat(res[1], 64)
	a.firsts, errs[2] = strconv.ParseInt(res[2], 10, 64)
	a.procs, errs[3] = strconv.ParseInt(res[3], 10, 64)
	for _, e := range errs {
		if e != nil {
			return lawAnswer{}, fmt.Errorf("fleet: the budget script answered %v: %w", res, e)
		}
	}
	return a, nil
}

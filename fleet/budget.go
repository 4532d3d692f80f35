package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/steadfast-go/steadfast/budget"
	"github.com/steadfast-go/steadfast/core"
)

// The fleet's counts are kept in slots of a tenth of a second, summed over
// a second: the window of the recommended budget (retry.RecommendedBudget).
const (
	slot   = 100 * time.Millisecond
	slots  = 10
	window = slot * slots
)

// Budget is a retry.Budget shared by a fleet: the recommended budget (retry.RecommendedBudget)'s
// algorithm, run on the whole fleet's attempts, with its first attempts
// held back as the in-process budget holds them (see HoldFirst). The fleet
// may retry at up
// to ratio × its rate of first attempts, scaled by the share of its recent
// retries that succeeded, never below minPerSecond, and each process paces
// its retries at its part of that rate, in proportion to its first
// attempts. An outage seen by eight replicas is thus held to one budget's
// retries, not eight, and the replicas learn from each other's failures.
//
// No Redis round trip is on a call's path: attempts are counted in memory,
// and a goroutine of the Budget's own exchanges the counts with Redis every
// sync interval. While Redis cannot be reached, the Budget paces retries
// at the rate of an in-process the recommended budget (retry.RecommendedBudget) of the same setting,
// which has counted this process's attempts all along, through the same
// token bucket, so that turns already promised count on both sides of the
// change. Close ends the goroutine.
// It is safe for concurrent use; share one per provider in each process.
type Budget struct {
	client  redis.UniversalClient
	keys    []string
	id      string
	timeout time.Duration
	h       *health
	local   *budget.Adaptive

	firsts, retries, retryOK atomic.Int64

	mu     sync.Mutex
	pace   *budget.Pacing // the recommended budget's arithmetic, on the fleet's counts
	pushed counts         // the counts Redis has had
	fleet  counts         // the fleet's counts over the window, as of the last exchange
	procs  int64          // processes that exchanged within the window
	mine   []int64        // this process's first attempts sent at each of the last exchanges
	next   int            // the oldest entry of mine

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type counts struct{ firsts, retries, retryOK int64 }

var _ budget.Holder = (*Budget)(nil)

// NewBudget returns a Budget over the Redis keys "steadfast:budget:{key}"
// and starts its goroutine; Close it when done. Every process calling one
// provider should use the same key and setting (WithPacing; by default
// retry.RecommendedBudget's). Redis need not be reachable yet. It reports
// an error naming the first bad argument.
func NewBudget(client redis.UniversalClient, key string, opts ...BudgetOption) (*Budget, error) {
	c := budgetConfig(opts)
	if err := checkClient("NewBudget", client); err != nil {
		return nil, err
	}
	if err := checkCommon("NewBudget", key, c); err != nil {
		return nil, err
	}
	if c.syncInterval <= 0 || c.syncInterval > window {
		return nil, fmt.Errorf("fleet: NewBudget: WithSyncInterval(%v): must be positive and at most %v", c.syncInterval, window)
	}
	p := recommended
	if c.pacing != nil {
		p = *c.pacing
	}
	pace, err := budget.NewPacing(p.ratio, p.minPerSecond, p.maxWait)
	if err != nil {
		return nil, fmt.Errorf("fleet: NewBudget: WithPacing: %w", err)
	}
	local, err := budget.NewAdaptive(p.ratio, p.minPerSecond, p.maxWait)
	if err != nil {
		return nil, fmt.Errorf("fleet: NewBudget: WithPacing: %w", err)
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
		timeout: c.timeout, h: h, local: local, pace: pace,
		mine:  make([]int64, int((window+c.syncInterval-1)/c.syncInterval)),
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

// Degraded reports whether the Budget is pacing retries locally because
// Redis did not answer.
func (b *Budget) Degraded() bool { return b.h.down.Load() }

// RecordAttempt counts attempt n's result: first attempts set the pace,
// retries' successes scale it.
func (b *Budget) RecordAttempt(ctx context.Context, n int, success bool) {
	b.local.RecordAttempt(ctx, n, success)
	if n <= 1 {
		b.firsts.Add(1)
		return
	}
	b.retries.Add(1)
	if success {
		b.retryOK.Add(1)
	}
}

// HoldFirst holds a first attempt back as the recommended budget (retry.RecommendedBudget) does, on
// this process's own attempts (its in-process budget's): while most of the
// attempts it made lately failed, first attempts go at twice the rate of
// its recent successes, each held at most the setting's maxWait. Every
// replica holding to its own successes holds the fleet to twice its
// successes, with no round trip on the call's path.
func (b *Budget) HoldFirst(ctx context.Context, held time.Duration) (time.Duration, bool) {
	return b.local.HoldFirst(ctx, held)
}

// ReserveRetry takes a retry's token: the wait until it is due, or a
// refusal when that would be longer than maxWait or the setting's; its
// Cancel gives the token back. One token
// bucket serves both ways of deciding: its rate is this process's part of
// the fleet's, or, while Redis is unreachable, the in-process budget's, so
// that the turns it has promised count across a Redis outage's both edges
// instead of each side starting afresh.
func (b *Budget) ReserveRetry(ctx context.Context, maxWait time.Duration) core.Reservation {
	now := time.Now()
	var rate float64
	down := b.h.down.Load()
	if down {
		b.h.traceLocal(ctx)
		rate = b.local.Rate()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !down {
		rate = b.rate()
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

// rate is this process's part of the fleet's rate, worked out from the
// fleet's counts and this process's own not yet sent, in proportion to its
// first attempts. It runs under b.mu.
func (b *Budget) rate() float64 {
	pf := b.firsts.Load() - b.pushed.firsts
	firsts := b.fleet.firsts + pf
	retries := b.fleet.retries + b.retries.Load() - b.pushed.retries
	ok := b.fleet.retryOK + b.retryOK.Load() - b.pushed.retryOK
	fleetRate := b.pace.Rate(firsts, retries, ok, window)
	part := 1 / float64(max(b.procs, 1))
	if firsts > 0 {
		var mine int64
		for _, n := range b.mine {
			mine += n
		}
		part = min(float64(mine+pf)/float64(firsts), 1)
	}
	return fleetRate * part
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
// fleet's. Counts that fail to reach Redis are dropped, not sent later: by
// then they would be out of the window and would only inflate it.
func (b *Budget) exchange() {
	cur := counts{b.firsts.Load(), b.retries.Load(), b.retryOK.Load()}
	b.mu.Lock()
	d := counts{cur.firsts - b.pushed.firsts, cur.retries - b.pushed.retries, cur.retryOK - b.pushed.retryOK}
	b.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	res, err := exchange.Run(ctx, b.client, b.keys, d.firsts, d.retries, d.retryOK, b.id,
		slot.Milliseconds(), slots).Int64Slice()
	if err == nil && len(res) != 4 {
		err = fmt.Errorf("fleet: the budget script answered %v", res)
	}

	b.mu.Lock()
	b.pushed = cur
	b.mine[b.next] = d.firsts
	b.next = (b.next + 1) % len(b.mine)
	if err == nil {
		b.fleet = counts{res[0], res[1], res[2]}
		b.procs = res[3]
	}
	b.mu.Unlock()
	if err != nil {
		b.h.failed(err)
		return
	}
	b.h.ok()
}

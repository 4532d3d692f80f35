package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/ratelimit"
)

// Limiter is a ratelimit.Backend whose bucket is kept in Redis: every
// process that builds one with the same key and limit draws from it. Pass
// it to ratelimit.New or ratelimit.Middleware; with
// ratelimit.WithCost and ratelimit.WithUsage, the bucket counts tokens.
//
// Each Reserve is one Redis round trip, bounded by WithTimeout; so is each
// Adjust. When Redis does not answer in time, the Limiter decides locally
// with its share of the limit (WithFallbackShare), promising turns at most
// a quarter of a second ahead (a call that would wait longer is refused),
// tries Redis again with one call every tenth of a second, and goes back to
// the shared bucket as soon as it answers. The replicas of a fleet come
// back over up to a second (a go-redis client that failed to dial a server
// dials it again once a second): until every share is seen back, or a
// second and a half has passed, the shared bucket counts the replicas not
// yet back as spending their shares in full. It is safe for concurrent
// use.
type Limiter struct {
	client  redis.UniversalClient
	key     string
	burst   int
	limit   rate.Limit
	share   float64
	timeout time.Duration
	h       *health
	local   atomic.Pointer[localBucket]
	// seen is when Redis last answered, and ahead how far the shared
	// bucket's theoretical arrival time was then ahead of that instant: the
	// bucket held burst less ahead × rate tokens, or owed promised waits.
	seen, ahead atomic.Int64
	// back is the key of the bucket's return (see gcra), and counted the
	// return this Limiter was last counted in.
	back    string
	counted atomic.Pointer[string]
}

// localBucket is the bucket a Limiter decides with while Redis is away.
type localBucket struct {
	lim     *rate.Limiter
	backend ratelimit.Backend
}

var _ ratelimit.Backend = (*Limiter)(nil)

// NewLimiter returns a Limiter over the Redis bucket named key (stored under
// "steadfast:limit:" + key), refilled at r tokens a second up to burst: for
// 2,000,000 tokens a minute, rate.Limit(2_000_000.0/60) and a burst of at
// most the largest cost a call may have. Every process sharing the key must
// give the same r and burst. It reports an error naming the first bad
// argument.
func NewLimiter(client redis.UniversalClient, key string, r rate.Limit, burst int, opts ...LimiterOption) (*Limiter, error) {
	c := limiterConfig(opts)
	if err := checkClient("NewLimiter", client); err != nil {
		return nil, err
	}
	if err := checkCommon("NewLimiter", key, c); err != nil {
		return nil, err
	}
	switch {
	case !(r > 0) || r == rate.Inf || math.IsInf(float64(r), 0):
		return nil, fmt.Errorf("fleet: NewLimiter: rate is %v, must be positive and finite", r)
	case burst < 1:
		return nil, fmt.Errorf("fleet: NewLimiter: burst is %d, must be at least 1", burst)
	case !(c.fallbackShare > 0 && c.fallbackShare <= 1):
		return nil, fmt.Errorf("fleet: NewLimiter: WithFallbackShare(%v): must be in (0, 1]", c.fallbackShare)
	}
	h, err := newHealth(c, "limiter", key)
	if err != nil {
		return nil, err
	}
	l := &Limiter{
		client: client, key: "steadfast:limit:" + key, burst: burst,
		limit: r, share: c.fallbackShare, timeout: c.timeout, h: h,
	}
	var ok bool
	if l.back, ok = returnKey(l.key); !ok {
		return nil, fmt.Errorf("fleet: NewLimiter: key %q has a '}' outside a hash tag: it cannot share a Redis Cluster slot with the Limiter's second key", key)
	}
	l.fallBack()
	h.onDown, h.onUp = l.fallBack, l.comeBack
	return l, nil
}

// fallBack gives the local bucket this replica's share of the shared
// bucket as Redis last told it: its share of the burst, less its share of
// what the fleet had taken and of the waits it had promised, which still
// fire. The rest of the fleet went on taking tokens since this replica
// last heard of the bucket, so for up to a second that view is taken as
// it was, not refilled. Replicas that fall back at once thus send no more
// together than the shared bucket would have let through.
func (l *Limiter) fallBack() {
	now := time.Now()
	refilled := max(now.Sub(time.Unix(0, l.seen.Load()))-staleView, 0)
	taken := max(time.Duration(l.ahead.Load())-refilled, 0).Seconds() * float64(l.limit)
	tokens := l.share * (float64(l.burst) - taken) // may be negative: a debt
	lim := rate.NewLimiter(l.limit*rate.Limit(l.share), l.burst)
	take(lim, now, l.burst-int(math.Floor(tokens)))
	l.local.Store(&localBucket{lim: lim, backend: ratelimit.InProcess(lim)})
}

// comeBack, once Redis answers again, takes from the shared bucket what
// this replica took from its share while deciding locally, waits promised
// and not yet due included: the shared bucket knows nothing of it, and may
// even have come back empty of state, that is full.
func (l *Limiter) comeBack() {
	lb := l.local.Load()
	used := l.share*float64(l.burst) - lb.lim.TokensAt(time.Now())
	if _, _, err := l.take(context.Background(), max(int(math.Ceil(used)), 0), -1, true); err != nil {
		l.h.failed(err)
	}
}

// returnWindow is how long a return stays open at most (see gcra): a
// go-redis client that failed to dial a server dials it again once a
// second, and a Limiter deciding locally tries Redis every probeEvery.
const returnWindow = 1500 * time.Millisecond

// returnKey is the key of the return of the bucket stored under key, in
// the same Redis Cluster slot: after the key's hash tag, or around the
// whole key. It reports false for a key with a '}' but no hash tag, which
// no other key shares a slot with.
func returnKey(key string) (string, bool) {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key + ":return", true
		}
	}
	if strings.ContainsRune(key, '}') {
		return "", false
	}
	return "{" + key + "}:return", true
}

// staleView is how long a Limiter that falls back takes the shared bucket
// to have stayed as Redis last told it.
const staleView = time.Second

// localHorizon is how far ahead a Limiter deciding locally promises turns:
// a call that would wait longer is refused. What a replica has promised
// when Redis answers again is taken from the shared bucket at once, which
// gives those turns the first slots of the shared queue; promised over a
// span no longer than the one those slots cover (the fleet's shares add up
// to the whole rate), they go out when the shared bucket expects them.
// Promised over seconds, they would go out while the shared bucket, its
// debt already repaid, lets the rest of the fleet use the whole rate.
const localHorizon = 250 * time.Millisecond

// take takes n tokens from lim at once, into debt beyond its burst.
func take(lim *rate.Limiter, now time.Time, n int) {
	for burst := lim.Burst(); n > 0; n -= burst {
		lim.ReserveN(now, min(n, burst))
	}
}

// Reserve implements ratelimit.Backend. A wait's Cancel gives its tokens
// back to the shared bucket (Adjust), or to the local one it came from.
func (l *Limiter) Reserve(ctx context.Context, n int, maxWait time.Duration) (core.Reservation, error) {
	if n > l.burst {
		return core.Reservation{}, &ratelimit.LimitedError{Cost: n, Burst: l.burst}
	}
	if l.h.local() {
		l.h.traceLocal(ctx)
		return l.local.Load().backend.Reserve(ctx, n, min(maxWait, localHorizon))
	}
	limit := -1.0
	if maxWait < rate.InfDuration {
		limit = maxWait.Seconds()
	}
	wait, ok, err := l.run(ctx, n, limit)
	if err != nil {
		if ctx.Err() != nil {
			l.h.probing.Store(false)
			return core.Reservation{}, ctx.Err()
		}
		l.h.failed(err)
		l.h.traceLocal(ctx)
		return l.local.Load().backend.Reserve(ctx, n, min(maxWait, localHorizon))
	}
	l.h.ok()
	res := core.Reservation{Delay: wait, OK: ok}
	if ok && wait > 0 {
		res.Cancel = func() { l.Adjust(ctx, -n) }
	}
	return res, nil
}

// Adjust implements ratelimit.Backend.
func (l *Limiter) Adjust(ctx context.Context, delta int) {
	if delta == 0 {
		return
	}
	if l.h.local() {
		l.local.Load().backend.Adjust(ctx, delta)
		return
	}
	// The call's context may be done (a cancelled wait gives its tokens
	// back): the adjustment is bounded by the timeout alone.
	if _, _, err := l.run(context.WithoutCancel(ctx), delta, -1); err != nil {
		l.h.failed(err)
		return
	}
	l.h.ok()
}

// Degraded reports whether the Limiter is deciding locally because Redis
// did not answer.
func (l *Limiter) Degraded() bool { return l.h.down.Load() }

// seconds reads a duration in seconds that the script wrote as a string.
func seconds(v any) (time.Duration, error) {
	s, _ := v.(string)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("a duration of %q", s)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// run is one call of the gcra script, bounded by the timeout.
func (l *Limiter) run(ctx context.Context, n int, maxWait float64) (time.Duration, bool, error) {
	return l.take(ctx, n, maxWait, false)
}

// take is run for a Limiter that may be coming back from deciding locally.
func (l *Limiter) take(ctx context.Context, n int, maxWait float64, back bool) (time.Duration, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	counted, returning := "", "0"
	if p := l.counted.Load(); p != nil {
		counted = *p
	}
	if back {
		returning = "1"
	}
	sent := time.Now()
	res, err := gcra.Run(ctx, l.client, []string{l.key, l.back}, 1/float64(l.limit), l.burst, n, maxWait,
		l.share, counted, returning, returnWindow.Milliseconds()).Slice()
	if err != nil {
		return 0, false, err
	}
	if len(res) != 4 {
		return 0, false, fmt.Errorf("fleet: the limiter script answered %v", res)
	}
	admitted, _ := res[0].(int64)
	wait, err1 := seconds(res[1])
	ahead, err2 := seconds(res[2])
	if err := errors.Join(err1, err2); err != nil {
		return 0, false, fmt.Errorf("fleet: the limiter script answered %v: %w", res, err)
	}
	l.seen.Store(sent.UnixNano())
	l.ahead.Store(int64(ahead))
	if id, _ := res[3].(string); id != "" && id != counted {
		l.counted.Store(&id)
	}
	return wait, admitted == 1, nil
}

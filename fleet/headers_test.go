package fleet_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/ratelimit"
)

// A fleet whose shared bucket allows more than the provider's key really
// does (the tier's published quota, while another service shares the key,
// or the organisation's limit was lowered) meets the provider's 429s when
// it learns the limit from them. Paced by the headers, counted in Redis
// from every replica's answers and calls, it holds the calls the key has
// no room for until the reset: at least 90 % fewer 429s, and more calls
// succeed. (Each replica pacing by its own answers alone left 57 to 81 %
// fewer: it learns of the others' calls only from its next answer.)
func TestAFleetPacesByTheProvidersHeaders(t *testing.T) {
	c := client(t)
	const (
		replicas = 4
		quota    = 40 // the key's requests a second
		load     = 1.6
		run      = 4 * time.Second
	)
	var got [2]fleetRun
	for i, paced := range []bool{false, true} {
		key := &sharedKey{quota: quota, window: time.Second, latency: 20 * time.Millisecond, start: time.Now().Truncate(time.Second)}
		var rs []core.Runnable
		bucket := uniqueKey(t) // one shared bucket, each replica with its Limiter over it
		for range replicas {
			// Each replica has its own Redis connection, Limiter (over the
			// one bucket) and provider client, as a process of its own
			// would.
			lim := newLimiter(t, dial(t, c.Options().Addr), bucket, rate.Limit(2*quota), 5)
			var inner core.Runnable = &replicaClient{key: key}
			if !paced {
				inner = core.RunnableFunc(inner.Invoke) // its headers hidden: limits learned from 429s
			}
			r, err := ratelimit.New(inner, lim, ratelimit.WithMaxWait(2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, r)
		}
		got[i] = offer(t.Context(), rs, load*quota, run)
		got[i].tooMany = key.tooMany.Load()
		t.Logf("paced %v: %d calls, %d succeeded, %d answered 429", paced, got[i].calls, got[i].ok, got[i].tooMany)
	}
	reactive, paced := got[0], got[1]
	if reactive.tooMany < 20 {
		t.Fatalf("reacting to 429s met %d, want many: the scenario does not bind", reactive.tooMany)
	}
	if 10*paced.tooMany > reactive.tooMany {
		t.Errorf("paced by the headers: %d 429s against %d reacting; want at least 90 %% fewer", paced.tooMany, reactive.tooMany)
	}
	if paced.ok < reactive.ok {
		t.Errorf("paced by the headers: %d calls succeeded against %d reacting; want as many or more", paced.ok, reactive.ok)
	}
}

type fleetRun struct {
	calls, ok int64
	tooMany   int64
}

// offer sends Poisson arrivals at perSecond to the replicas at random for
// run, each call within a deadline of 2 s, and counts those that succeed.
func offer(ctx context.Context, rs []core.Runnable, perSecond float64, run time.Duration) fleetRun {
	var res fleetRun
	var ok atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for at := time.Duration(0); ; {
		at += time.Duration(rand.ExpFloat64() / perSecond * float64(time.Second))
		if at >= run {
			break
		}
		time.Sleep(time.Until(start.Add(at)))
		res.calls++
		r := rs[rand.IntN(len(rs))]
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if _, err := r.Invoke(cctx, "q"); err == nil {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	res.ok = ok.Load()
	return res
}

// sharedKey is one API key of a provider, used by every replica: quota
// requests a window (windows aligned on multiples of window), a 429
// beyond, and OpenAI's headers on every answer, computed as the request
// arrives and sent with the answer latency later.
type sharedKey struct {
	quota   int
	window  time.Duration
	latency time.Duration
	start   time.Time

	mu      sync.Mutex
	win     int64
	used    int
	tooMany atomic.Int64
}

func (k *sharedKey) serve(ctx context.Context) (http.Header, error) {
	now := time.Now()
	into := now.Sub(k.start)
	k.mu.Lock()
	if w := int64(into / k.window); w != k.win {
		k.win, k.used = w, 0
	}
	admitted := k.used < k.quota
	if admitted {
		k.used++
	}
	left := k.quota - k.used
	k.mu.Unlock()
	h := http.Header{
		"X-Ratelimit-Limit-Requests":     {strconv.Itoa(k.quota)},
		"X-Ratelimit-Remaining-Requests": {strconv.Itoa(left)},
		"X-Ratelimit-Reset-Requests":     {(k.window - into%k.window).String()},
	}
	if !admitted {
		k.tooMany.Add(1)
		return h, errTooMany
	}
	select {
	case <-time.After(k.latency):
	case <-ctx.Done():
		return h, ctx.Err()
	}
	return h, nil
}

// replicaClient is one replica's provider client: it reads the headers of
// its own answers, as the provider adapters do.
type replicaClient struct {
	key    *sharedKey
	limits llmhttp.RateLimitTracker
}

func (c *replicaClient) Invoke(ctx context.Context, _ any, _ ...core.Option) (any, error) {
	h, err := c.key.serve(ctx)
	c.limits.Observe(&http.Response{Header: h})
	return "ok", err
}

func (c *replicaClient) Batch(ctx context.Context, in []any, o ...core.Option) ([]any, error) {
	return core.RunnableFunc(c.Invoke).Batch(ctx, in, o...)
}

func (c *replicaClient) Stream(ctx context.Context, in any, o ...core.Option) (<-chan any, error) {
	return core.RunnableFunc(c.Invoke).Stream(ctx, in, o...)
}

// RateLimits is what the provider adapters report of their limits.
func (c *replicaClient) RateLimits() (llmhttp.RateLimits, bool) { return c.limits.RateLimits() }

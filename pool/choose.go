package pool

import (
	"context"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"
)

// choice is a call's deployment, or why there is none.
type choice struct {
	d     *deployment
	until time.Time // no deployment serves before then
	now   time.Time // when the choice was made: the call's start
	// paced reports that the first deployment back is back at its
	// provider's reset, which its headers said: no failure keeps it out.
	paced bool
}

// choose picks the deployment of one attempt (of one Batch item) among
// those not cooling down, avoiding those that failed this call (kept in
// its core.State) while another can serve. With affinity, the key's
// rendezvous winner; else the less loaded of two drawn at random, by calls
// under way per unit of weight (the power of two choices). A deployment
// that reads its provider's limits is chosen only if it takes one of the
// requests they leave until their reset: the choice counts the request, so
// that concurrent calls do not all take the last one.
func (r *Runnable) choose(ctx context.Context, input any, failed uint64, k speedKind, p *plan) choice {
	now := time.Now()
	c := choice{now: now}
	var open []*deployment // not cooling down, and allowed by the call's constraints
	for _, d := range r.deps {
		if p != nil && !p.allowed[d.index] {
			continue
		}
		if until, paced := d.availableAt(now); !until.IsZero() {
			c.later(until, paced)
			continue
		}
		open = append(open, d)
	}
	if len(open) == 0 {
		return c
	}
	key := ""
	if r.affinity != nil {
		key = r.affinity(ctx, input)
	}
	for len(open) > 0 {
		cands := open
		if fresh := untried(open, failed); len(fresh) > 0 {
			cands = fresh
		}
		d := p.first(cands) // the call's Order first
		if d == nil {
			d = pick(key, cands, k)
		}
		if d.pace == nil {
			c.d = d
			return c
		}
		res := d.pace.Reserve(now, 0)
		if res.OK {
			c.d = d
			return c
		}
		c.later(now.Add(res.Delay), true) // another call took its last request
		open = slices.DeleteFunc(open, func(o *deployment) bool { return o == d })
	}
	return c
}

// later notes a deployment that cannot serve before until, for the pace's
// reset when paced.
func (c *choice) later(until time.Time, paced bool) {
	if c.until.IsZero() || until.Before(c.until) {
		c.until, c.paced = until, paced
	}
}

// pick is the choice among ds, which can all serve: key's rendezvous
// winner, or with no key the power of two choices.
func pick(key string, ds []*deployment, k speedKind) *deployment {
	if key != "" {
		return rendezvous(key, ds)
	}
	return twoChoices(ds, k)
}

// untried returns the deployments whose bit is not set in failed.
func untried(ds []*deployment, failed uint64) []*deployment {
	if failed == 0 {
		return ds
	}
	var out []*deployment
	for _, d := range ds {
		if d.index >= 64 || failed&(1<<d.index) == 0 {
			out = append(out, d)
		}
	}
	return out
}

// twoChoices draws two deployments and returns the one of lower cost: the
// power of two choices (Mitzenmacher) on the cost of Finagle's and
// Linkerd's balancer, peak EWMA: the calls under way plus this one, times
// the deployment's recent speed of the call's kind, per unit of weight. A
// deployment with none measured yet is taken to have the mean of the
// others' (1 when
// none has one), so that at the start the calls under way decide: a
// deployment that cost nothing would draw every call until its first
// answer, and a busy one would turn them away.
func twoChoices(ds []*deployment, k speedKind) *deployment {
	a := ds[rand.IntN(len(ds))]
	if len(ds) == 1 {
		return a
	}
	b := ds[rand.IntN(len(ds)-1)]
	if b == a {
		b = ds[len(ds)-1]
	}
	unknown := meanSpeed(ds, k)
	if b.cost(k, unknown) < a.cost(k, unknown) {
		return b
	}
	return a
}

// meanSpeed is the mean of the speeds of kind k measured among ds, 1 when
// none is.
func meanSpeed(ds []*deployment, k speedKind) float64 {
	sum, n := 0.0, 0
	for _, d := range ds {
		if l := d.speed.of(k); l > 0 {
			sum, n = sum+l, n+1
		}
	}
	if n == 0 {
		return 1
	}
	return sum / float64(n)
}

// rendezvous returns the deployment with the highest weighted score for
// key (weighted rendezvous hashing: −weight / ln(h), h the hash of key and
// the deployment's name in (0, 1)).
func rendezvous(key string, ds []*deployment) *deployment {
	var best *deployment
	bestScore := math.Inf(-1)
	for _, d := range ds {
		h := fnv.New64a()
		h.Write([]byte(key))
		h.Write([]byte{0})
		h.Write([]byte(d.Name))
		u := (float64(mix(h.Sum64())>>11) + 0.5) / (1 << 53)
		if score := -d.Weight / math.Log(u); score > bestScore {
			best, bestScore = d, score
		}
	}
	return best
}

// mix is splitmix64's finalizer: FNV alone leaves hashes of inputs that
// differ in their last bytes (the names "a", "b", "c") correlated, and one
// deployment would win most keys.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// requestsFault reports a status that says the request, not the
// deployment, was at fault: it would fail the same way anywhere.
func requestsFault(code int) bool {
	switch code {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

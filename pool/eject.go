package pool

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Outlier ejection, after Envoy's and gRPC's (A50), as one rule. When a
// deployment fails a call on its own and its server gave no hint, it is
// ejected if, in its current window, (1) it has failed at least
// allowedFails calls (the minimum volume), (2) they are at least half of
// its calls (the failure percentage), and (3) its success rate is below
// its peers' (the other deployments in rotation, their calls in their
// windows taken together) by more than chance explains: the upper bound
// of its rate, a Wilson score interval of confidenceZ deviations, is under
// the lower bound of theirs. Failures its peers share (a provider-wide
// outage, an overload of them all, failures at random) eject none, and a
// deployment with no peer to compare with is never ejected: the calls
// then fail over as the UnavailableError and the retry layer decide. It
// is out for the cooldown × 2^n, n its ejections not yet forgiven, at
// most maxEjectionFactor cooldowns, less up to a tenth at random so that
// deployments ejected together do not return together; each window that
// passes from its return without another ejection forgives one. At most a
// share of the pool is out at once (WithMaxEjected, half by default, and
// always one may be), counting the deployments a server's hint or a dead
// key holds out; a hint always takes its deployment out, and when that
// puts more than the share out, ejected deployments come back, the one
// due first first: an ejection is the pool's guess, a hint the server's
// word.

// maxEjectionFactor caps an ejection at this many cooldowns (Envoy's
// max_ejection_time is 300 s over a 30 s base: 10×; LLM deployments flap
// over minutes, so 5 s × 60 is 5 minutes).
const maxEjectionFactor = 60

// ejectionJitter is the largest share taken off an ejection at random.
const ejectionJitter = 0.1

// confidenceZ is how many standard deviations wide the intervals are
// whose separation makes an outlier: 3, a chance of about one in a
// thousand on each side, since the pool asks at every failure rather than
// once an interval as Envoy does (its success_rate_stdev_factor is 1.9).
const confidenceZ = 3.0

// defaultMaxEjected is WithMaxEjected's default: half of the pool.
const defaultMaxEjected = 0.5

// ejection returns how long d is ejected for now: cooldown × 2^n, capped,
// jittered down. It runs under d.mu, and counts the ejection.
func (d *deployment) ejection(now time.Time, window, cooldown time.Duration) time.Duration {
	d.forgive(now, window)
	factor := min(int64(1)<<min(d.ejections, 62), maxEjectionFactor)
	d.ejections++
	wait := time.Duration(factor) * cooldown
	wait -= time.Duration(ejectionJitter * rand.Float64() * float64(wait))
	d.back = now.Add(wait)
	d.ejected = d.back
	return wait
}

// forgive takes off d's ejections one for each window that passed since it
// returned from the last. It runs under d.mu.
func (d *deployment) forgive(now time.Time, window time.Duration) {
	if d.ejections == 0 || d.back.IsZero() || now.Before(d.back) {
		return
	}
	healthy := int(now.Sub(d.back) / window)
	if healthy > 0 {
		d.ejections = max(0, d.ejections-healthy)
		d.back = d.back.Add(time.Duration(healthy) * window)
	}
}

// peers is what d's peers did in their windows, taken together: what
// ejection compares d with.
type peers struct {
	calls, successes int
}

// outlier reports whether d, its counts in the window, is an outlier of
// its peers ps: at least allowed failures, at least half of its calls,
// and a success rate below theirs by more than chance explains: the upper
// bound of its own (a Wilson score interval of confidenceZ deviations) is
// under the lower bound of theirs. It runs under d.mu.
func (d *deployment) outlier(allowed int, ps peers) bool {
	if ps.calls == 0 || d.fails < allowed || 2*d.fails < d.calls {
		return false
	}
	_, upper := wilson(d.calls-d.fails, d.calls)
	lower, _ := wilson(ps.successes, ps.calls)
	return upper < lower
}

// wilson returns the Wilson score interval, of confidenceZ deviations, of
// a success rate of successes in calls: unlike the normal one it holds
// for a few calls and for rates near 0 or 1.
func wilson(successes, calls int) (lower, upper float64) {
	n, p, z2 := float64(calls), float64(successes)/float64(calls), confidenceZ*confidenceZ
	center := (p + z2/(2*n)) / (1 + z2/n)
	half := confidenceZ * math.Sqrt(p*(1-p)/n+z2/(4*n*n)) / (1 + z2/n)
	return center - half, center + half
}

// peersOf returns what d's peers in rotation did in their windows. It runs
// under r.coolMu, and takes each peer's mu.
func (r *Runnable) peersOf(d *deployment, now time.Time) peers {
	var ps peers
	for _, p := range r.deps {
		if p == d || !p.unavailableUntil(now).IsZero() {
			continue
		}
		p.mu.Lock()
		p.roll(now, r.window)
		ps.calls += p.calls
		ps.successes += p.calls - p.fails
		p.mu.Unlock()
	}
	return ps
}

// allowedOut is the most deployments that may be out at once for ejection
// to take one more: the share of the pool, and one at least.
func (r *Runnable) allowedOut() int {
	return max(1, int(r.maxEjected*float64(len(r.deps))))
}

// out counts the deployments out of rotation now, for any cause but their
// providers' rate-limit headers.
func (r *Runnable) out(now time.Time) int {
	n := 0
	for _, d := range r.deps {
		if !d.coolsUntil(now).IsZero() {
			n++
		}
	}
	return n
}

// mayEject reports whether one more deployment may be ejected now.
func (r *Runnable) mayEject(now time.Time) bool {
	return r.out(now) < r.allowedOut()
}

// yield brings ejected deployments back, the one due first first, while
// more than the pool's share is out: after a server's hint took one out.
// It runs under r.coolMu.
func (r *Runnable) yield(now time.Time) {
	over := r.out(now) - r.allowedOut()
	if over <= 0 {
		return
	}
	type due struct {
		d     *deployment
		until time.Time
	}
	var ejected []due
	for _, d := range r.deps {
		d.mu.Lock()
		if d.ejectedOnly(now) {
			ejected = append(ejected, due{d, d.ejected})
		}
		d.mu.Unlock()
	}
	slices.SortFunc(ejected, func(a, b due) int { return a.until.Compare(b.until) })
	for _, e := range ejected[:min(over, len(ejected))] {
		e.d.mu.Lock()
		if e.d.ejectedOnly(now) { // a dead key is not brought back
			e.d.ejected, e.d.back = time.Time{}, now
			e.d.until.Store(now.UnixNano())
		}
		e.d.mu.Unlock()
	}
}

// ejectedOnly reports whether only its ejection keeps d out now: no hint,
// no dead key. It runs under d.mu.
func (d *deployment) ejectedOnly(now time.Time) bool {
	return d.ejected.After(now) && !d.held.After(now) && d.deadUntil.Load() <= now.UnixNano()
}

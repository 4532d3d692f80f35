package pool

import (
	"math/rand/v2"
	"time"
)

// Ejection, as Envoy's and gRPC's (A50) outlier detection: a deployment
// whose own failures are at least half of its calls in the window, and at
// least allowedFails of them, is ejected for the cooldown times 2^n, n its
// ejections not yet forgiven, at most maxEjectionFactor times the cooldown,
// less up to a tenth at random so that deployments ejected together do not
// return together. Each window that passes from its return without another
// ejection forgives one. It is an outlier only beside a peer that is
// healthy now (in rotation, and under the failure share in its own
// window): when every deployment fails together (a provider-wide outage)
// none is ejected, and the calls fail over as UnavailableError and the
// retry layer decide. At most half of the pool is out at once (mayCool).

// maxEjectionFactor caps an ejection at this many cooldowns (Envoy's
// max_ejection_time is 300 s over a 30 s base: 10×; LLM deployments flap
// over minutes, so 5 s × 60 is 5 minutes).
const maxEjectionFactor = 60

// ejectionJitter is the largest share taken off an ejection at random.
const ejectionJitter = 0.1

// ejection returns how long d is ejected for now: cooldown × 2^n, capped,
// jittered down. It runs under d.mu, and counts the ejection.
func (d *deployment) ejection(now time.Time, window, cooldown time.Duration) time.Duration {
	d.forgive(now, window)
	factor := min(int64(1)<<min(d.ejections, 62), maxEjectionFactor)
	d.ejections++
	wait := time.Duration(factor) * cooldown
	wait -= time.Duration(ejectionJitter * rand.Float64() * float64(wait))
	d.back = now.Add(wait)
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

// failing reports whether d's own failures are at least half of its calls
// in its window, and at least allowed: an outlier's share, were its peers
// healthy. It runs under d.mu.
func (d *deployment) failing(allowed int) bool {
	return d.fails >= allowed && 2*d.fails >= d.calls
}

// healthyPeer reports whether a deployment other than d is in rotation
// now and under the failure share in its current window, with calls in it.
// It runs under r.coolMu, and takes each peer's mu.
func (r *Runnable) healthyPeer(d *deployment, now time.Time) bool {
	for _, p := range r.deps {
		if p == d || !p.unavailableUntil(now).IsZero() {
			continue
		}
		p.mu.Lock()
		p.roll(now, r.window)
		ok := p.calls > 0 && 2*p.fails < p.calls
		p.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

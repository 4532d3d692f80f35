package ratelimit

import (
	"math"
	"time"
)

// aimd is the arithmetic of a Concurrency's limit: what one call's
// outcome does to it. It is pure (the caller holds the lock and the
// clock), so that another store of the limit (the fleet module's) can
// follow the same rule.
type aimd struct {
	limit, min, max float64
	// epoch counts the cuts: an outcome cuts the limit only when its call
	// was admitted since the last cut, so one burst of 429s is one cut.
	epoch uint64
	// clean is the cost of the clean answers since the last change, from
	// calls admitted while the limit was in use; step is the next raise,
	// doubled by each clean window, so that a limit far below the
	// capacity finds it in a few windows. ceiling is a little under the
	// limit the last overload came at: the limit climbs back to it fast,
	// and from it probes again from a step of 1, so that it spends its
	// time near the capacity rather than overshooting it.
	clean, step, ceiling float64
	// cutTo is the limit the last cut left: a limit that has climbed
	// past it since has probed, and an overload then has found the
	// capacity between the two.
	cutTo float64
	// draining is whether the calls in flight have yet to come down to
	// the limit since the last cut: an overload or a queue before they
	// have is the same burst's, and does not cut again. A Concurrency's
	// own calls cannot be admitted above its limit, but a fleet's other
	// replicas still hold the calls they admitted before they learnt of
	// the cut, and a replica that sends a call meanwhile meets a 429 that
	// says nothing of the new limit.
	draining bool
	// soft is whether the last cut was a probe's (underCeiling), with no
	// raise since: an overload then is one the first cut did not go far
	// enough for, and cuts by underCeiling once more.
	soft bool
	// base and fast follow the time to the first chunk: its floor (the
	// provider's time with no queue) and a fast average. Only streams
	// report one: an answer's total time is its length, not load.
	base, fast time.Duration
}

// outcome is what a call's end says of the provider's capacity.
type outcome struct {
	cost float64
	// overload: a 429, a 529 or an overloaded 503; hint is its
	// Retry-After or reset, if it said one.
	overload bool
	hint     time.Duration
	// clean: an answer, with no sign of overload.
	clean bool
	// ttft is the time to the first chunk, 0 when not read.
	ttft time.Duration
	// epoch and saturated are the limit's state when the call was
	// admitted: the cuts made by then, and whether the limit was in use
	// (at least half of it in flight, or calls waiting).
	epoch     uint64
	saturated bool
	// inflight is the cost in flight once the call has ended (a fleet's,
	// across its replicas).
	inflight float64
}

const (
	// cutOverload is the cut of an overload with no hint, or one of a
	// second or less; a longer hint cuts more, down to cutLongest.
	cutOverload = 0.7
	cutLongest  = 0.1
	// underCeiling is where the ceiling is, from the limit an overload
	// came at; the limit stays plateau windows there before it probes
	// past it.
	underCeiling = 0.95
	plateau      = 4
	// cutQueue is the cut when the time to the first chunk says the
	// provider queues: twice its floor, and queueMargin above it.
	cutQueue    = 0.9
	queueMargin = 10 * time.Millisecond
)

// observe applies o to the limit and reports whether the limit changed.
func (a *aimd) observe(o outcome) bool {
	queued := a.sample(o.ttft)
	if o.inflight <= a.limit {
		a.draining = false
	}
	fresh := o.epoch == a.epoch && !a.draining
	switch {
	case o.overload && fresh:
		from, f, soft := a.overloadCut(o)
		changed := a.cut(from, f)
		a.soft = soft
		return changed
	case o.overload:
		return false // a cut since this call was admitted answered it, or is still draining
	case queued && fresh:
		return a.cut(a.limit, cutQueue)
	case !o.clean || !o.saturated || queued:
		return false
	}
	a.clean += o.cost
	window := a.limit
	if a.limit == a.ceiling && a.step == 1 {
		window *= plateau // at the ceiling: stay a while before probing past it
	}
	if a.clean < window {
		return false
	}
	return a.raise()
}

// raise adds a step to the limit after a clean window: up to the ceiling,
// where the step starts again from 1; past it, doubling each window.
func (a *aimd) raise() bool {
	before := a.limit
	next := a.limit + a.step
	a.step = math.Min(a.step*2, math.Max(1, a.limit/2))
	if a.limit < a.ceiling && next >= a.ceiling {
		next, a.step = a.ceiling, 1
	}
	a.limit, a.clean, a.soft = math.Min(a.max, next), 0, false
	return a.limit != before
}

// cut lowers the limit to from times factor, not below min, and starts a
// new epoch; the ceiling is a little under from.
func (a *aimd) cut(from, factor float64) bool {
	before := a.limit
	a.ceiling = math.Max(a.min, math.Floor(from*underCeiling))
	a.limit = math.Max(a.min, math.Floor(from*factor))
	a.cutTo, a.soft, a.draining = a.limit, false, true
	a.epoch++
	a.clean, a.step = 0, 1
	return a.limit != before
}

// overloadCut is what an overload cuts the limit from, and by: from the
// limit by cutOverload, with no hint or one of a second or less, by less
// for each doubling of a longer hint, never below cutLongest. But a limit
// that has climbed since the last cut (a probe past the ceiling, or a
// climb back to a ceiling the capacity has since fallen under) and meets
// an overload with no longer hint has found the capacity, between where
// the cut left it and where it is, and goes back just under it
// (underCeiling), and once more if the next overload comes before a
// raise (soft: one cut did not go far enough); the one after that is a
// capacity that fell, and cuts by cutOverload. A probe's cut is from the
// calls in flight when the provider refused, this one with them, where
// they were fewer than the limit (a limit that rose faster than its
// calls went past the capacity by more than a twentieth), but never
// from less than cutOverload of the limit.
func (a *aimd) overloadCut(o outcome) (from, factor float64, soft bool) {
	if o.hint <= time.Second && a.ceiling > 0 && (a.limit > a.cutTo || a.soft) {
		flight := math.Max(math.Min(a.limit, o.inflight+o.cost), a.limit*cutOverload)
		return flight, underCeiling, a.limit > a.cutTo
	}
	if o.hint <= time.Second {
		return a.limit, cutOverload, false
	}
	return a.limit, math.Max(cutLongest, cutOverload/(1+math.Log2(o.hint.Seconds()))), false
}

// sample adds a time to the first chunk to the averages and reports
// whether the provider queues: the sample and the fast average are twice
// the floor, and queueMargin above it. The floor drifts up slowly (a
// thousandth of the way to each sample above it), so that a provider that
// got slower for good becomes the new floor, but a queue that lasts does
// not.
func (a *aimd) sample(ttft time.Duration) bool {
	if ttft <= 0 {
		return false
	}
	switch {
	case a.base == 0 || ttft < a.base:
		a.base = ttft
	default:
		a.base += (ttft - a.base) / 1000
	}
	if a.fast == 0 {
		a.fast = ttft
	} else {
		a.fast += (ttft - a.fast) / 4
	}
	return ttft > 2*a.base && a.fast > 2*a.base && a.fast-a.base > queueMargin
}

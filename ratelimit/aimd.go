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
	switch {
	case o.overload && o.epoch == a.epoch:
		return a.cut(a.overloadCut(o.hint))
	case o.overload:
		return false // a cut since this call was admitted answered it
	case queued && o.epoch == a.epoch:
		return a.cut(cutQueue)
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
	a.limit, a.clean = math.Min(a.max, next), 0
	return a.limit != before
}

// cut lowers the limit by factor, not below min, and starts a new epoch.
func (a *aimd) cut(factor float64) bool {
	before := a.limit
	a.ceiling = math.Max(a.min, math.Floor(a.limit*underCeiling))
	a.limit = math.Max(a.min, math.Floor(a.limit*factor))
	a.cutTo = a.limit
	a.epoch++
	a.clean, a.step = 0, 1
	return a.limit != before
}

// overloadCut is the factor an overload with the hint cuts the limit by:
// cutOverload for a second or less, less for each doubling of it, and
// never below cutLongest; but a limit that has climbed since the last cut
// (a probe past the ceiling, or a climb back to a ceiling the capacity
// has since fallen under) and meets an overload with no longer hint has
// found the capacity, between where the cut left it and where it is, and
// goes back just under it (underCeiling). An overload before it climbs
// again is one the capacity fell under: it cuts by cutOverload.
func (a *aimd) overloadCut(hint time.Duration) float64 {
	if hint <= time.Second && a.ceiling > 0 && a.limit > a.cutTo {
		return underCeiling
	}
	if hint <= time.Second {
		return cutOverload
	}
	return math.Max(cutLongest, cutOverload/(1+math.Log2(hint.Seconds())))
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

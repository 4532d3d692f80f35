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
	// capacity finds it in a few windows (before the first cut, each
	// clean answer raises it: slow start). ceiling is a little under the
	// limit the last overload or queue came at: the limit climbs back to
	// it fast, and from it probes again from a step of 1, so that it
	// spends its time near the capacity rather than overshooting it.
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
	// base is the provider's time to a first chunk with no queue: an
	// average of the fastest first chunk of each window of queueWindow
	// streams; spread is the average of a window's mean first chunk less
	// its fastest (sample). wn, wsat, wmin and wsum are the window being
	// filled: its streams, those admitted while the limit was in use, its
	// fastest first chunk and their sum. Only streams report one: an
	// answer's total time is its length, not load.
	base, spread, wmin, wsum time.Duration
	wn, wsat                 int
	// queued is the last window's verdict: no raise until one says the
	// queue has drained.
	queued bool
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
	// cutQueue is the cut when a window's fastest first chunk says the
	// provider queues (sample). A window is queueWindow streams admitted
	// since the last cut.
	cutQueue    = 0.9
	queueWindow = 16
	// baseWeight is how far each window moves base and spread: 1/8 of
	// the way, base 1/8 of that after a queued window.
	baseWeight = 8
)

// observe applies o to the limit and reports whether the limit changed.
func (a *aimd) observe(o outcome) bool {
	queued := o.epoch == a.epoch && a.sample(o.ttft, o.saturated)
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
	case !o.clean || !o.saturated || a.queued:
		return false
	case a.epoch == 0: // slow start, as TCP's (RFC 5681): until the first cut, each clean answer adds its cost
		before := a.limit
		a.limit = math.Min(a.max, a.limit+o.cost)
		return a.limit != before
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
	a.queued = a.base > 0 // streams say whether it queues: the next raise waits for a window that says not
	return a.limit != before
}

// cut lowers the limit to from times factor, not below min, and starts a
// new epoch; the ceiling is a little under from.
func (a *aimd) cut(from, factor float64) bool {
	before := a.limit
	a.ceiling = math.Max(a.min, math.Floor(from*underCeiling))
	a.limit = math.Max(a.min, math.Floor(from*factor))
	a.cutTo, a.soft, a.draining = a.limit, false, true
	a.wn, a.wsat, a.wmin, a.wsum = 0, 0, 0, 0 // a window is of calls admitted since the cut
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

// sample adds a time to the first chunk of a call admitted since the
// last cut to the window, and reports whether the window it closes says
// the provider queues. A window is queued when its fastest first chunk
// is above base by more than half of spread and by more than half of
// base (uniform prompts on a batching server that slows as it fills are
// not a queue until then), and most of its calls were admitted while the limit
// was in use (an idle limit never cuts). base is the average of the
// windows' fastest, spread that of their mean less their fastest. A
// queue delays every first chunk of a window and moves its fastest; a
// prompt's length moves only its own, and the fastest of sixteen is that
// of a short prompt whatever the spread; and a spread of prompts widens
// the gap between a window's mean and its fastest, which a queue does
// not (it delays both alike), so the wider the spread the larger a shift
// must be to say queue. Both move 1/baseWeight of the way each window,
// base only a baseWeight'th of that for a queued window: the cut drains
// a queue of ours in a few windows, and one that stays is not ours (a
// provider that got slower for good, another tenant) and becomes the
// base.
func (a *aimd) sample(ttft time.Duration, saturated bool) bool {
	if ttft <= 0 {
		return false
	}
	if a.wn == 0 || ttft < a.wmin {
		a.wmin = ttft
	}
	a.wn++
	a.wsum += ttft
	if saturated {
		a.wsat++
	}
	if a.wn < queueWindow {
		return false
	}
	fastest, gap, busy := a.wmin, a.wsum/time.Duration(a.wn)-a.wmin, 2*a.wsat > a.wn
	a.wn, a.wsat, a.wmin, a.wsum = 0, 0, 0, 0
	if a.base == 0 {
		a.base, a.spread = fastest, gap
		return false
	}
	shift := fastest - a.base
	a.queued = busy && shift > a.spread/2 && shift > a.base/2
	a.spread += (gap - a.spread) / baseWeight
	if a.queued {
		a.base += shift / (baseWeight * baseWeight)
	} else {
		a.base += shift / baseWeight
	}
	return a.queued
}

// Package budget holds the retry budget that retry.RecommendedBudget
// returns, for a program that wants its own setting (Adaptive, a
// retry.Budget and a Holder), and that budget's arithmetic (Pacing), for a
// budget that counts attempts in a store shared by many processes, as the
// fleet module's Budget does on Redis. retry's TokenBudget, gRPC's retry
// throttling, stays in retry.
package budget

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steadfast-go/steadfast/core"
)

// Adaptive paces retries by what they achieve, and holds first
// attempts back while the provider fails most of them. Retries are drawn
// from a token bucket whose rate follows the recent rate of first attempts:
// Ratio of it while retries succeed, falling with the share of recent
// retries that succeeded, down to MinPerSecond when none does. Retries
// that work (an overload with lulls: the retry lands in the lull) keep
// their rate; retries that fail (an outage, a provider that collapsed
// under load) fall to a trickle at once, whatever the traffic, and stay
// there for as long as the outage lasts: until retries succeed again, or
// first attempts do (retries too few to judge are presumed to fare as
// well as first attempts). A retry waits for its token up to
// MaxWait, else is refused; the retry layer waits the longer of that and
// its backoff. A herd (every client at once after a quiet spell) earns
// retries as a second's worth of first attempts does, however short the
// moment it came in (for a retry that may wait less, pressed by its
// caller's deadline, as that much time's worth), or at Ratio of the rate
// the provider answered in the last tenth of a second, if that is more;
// and its retries are never promised one moment for all of them: their
// turns are spaced (see Pacing.Reserve).
//
// While more than half of the recent attempts fail (over the last tenth
// of a second, or as much of the last second as it takes for ten to
// fail, so that a small provider's clients, making a few dozen calls a
// second, are judged as a large one's are), first attempts are held too:
// they go at twice the rate of recent successes, and at least an eighth
// of the rate at which calls come, each waiting for a turn up to MaxWait
// and then going without one. First attempts are never refused. Once they
// have been held for half a second, retries not yet seen are presumed to
// fail as the attempts do.
// A provider that is down is then offered little more than what it can
// answer, so that one that collapsed under its backlog works it off and
// recovers sooner than if every call went at once, and the calls held
// across the outage succeed after it; while the provider answers, nothing
// is held (see HoldFirst).
//
// Recording a success costs one atomic add (and every 64th first attempt
// a snapshot of the counts), and asking whether to hold a first attempt
// one atomic load; the rates are worked out when a retry asks, over the
// last second. It is safe for concurrent use; share one among the
// RetryRunnables that call one provider.
type Adaptive struct {
	firsts, firstFail, retries, retryOK atomic.Int64 // attempts recorded, in all
	// arrived counts the calls that were held when they came, released
	// those that went after being held: the calls that came, held or
	// not, are firsts - released + arrived.
	arrived, released atomic.Int64
	holding           atomic.Bool // whether first attempts are held

	mu    sync.Mutex
	pace  *Pacing
	snaps [adaptiveSnaps]counts
	next  int // the oldest snapshot, replaced next
	// heldSince is when first attempts began to be held; zero while they
	// are not.
	heldSince time.Time
	// drain is the rate at which the calls still held go once the hold
	// ends: the rate they would be held to if it had not.
	drain float64
}

// The window over which Adaptive measures: a snapshot of the counts
// every tenth of it.
const (
	adaptiveWindow = time.Second
	adaptiveSnaps  = 10
	adaptiveSlot   = adaptiveWindow / adaptiveSnaps
	// adaptiveQuorum is how many retries in the window make their success
	// share count on their own; with fewer, the missing ones are taken to
	// fare as retries last did (see Pacing.share). It is also how many
	// failures it takes to hold first attempts.
	adaptiveQuorum = 10
	// holdFactor is how many attempts a second may go for each that
	// succeeds while first attempts are held: a provider that answers
	// half of them holds nothing back.
	holdFactor = 2
	// holdProbes is the share of the first attempts' rate that goes while
	// they are held, whatever fails.
	holdProbes = 1.0 / 8
	// burstSpan is how much of its rate a token bucket holds.
	burstSpan = 10 * time.Millisecond
	// minRate keeps the rate above zero, so that every wait is finite.
	minRate = 1e-3
)

type counts struct {
	at                                  time.Time
	firsts, firstFail, retries, retryOK int64
	arrived, released                   int64
}

// calls is how many calls came in c, held or not.
func (c counts) calls() int64 { return c.firsts - c.released + c.arrived }

// failed is how many of c's attempts failed.
func (c counts) failed() int64 { return c.firstFail + c.retries - c.retryOK }

// sub returns the counts made between o and c.
func (c counts) sub(o counts) counts {
	return counts{firsts: c.firsts - o.firsts, firstFail: c.firstFail - o.firstFail,
		retries: c.retries - o.retries, retryOK: c.retryOK - o.retryOK,
		arrived: c.arrived - o.arrived, released: c.released - o.released}
}

// NewAdaptive returns an Adaptive. ratio, in (0, 1], is the
// most retries per first attempt, reached while retries succeed: 0.2 means
// at most 20 % more load than no retrying. minPerSecond, at least 0, is
// the rate left when no retry succeeds (and the rate of a client too quiet
// to measure). maxWait, positive, is the longest a retry waits for its
// token, and a held first attempt for its turn. It reports an error naming
// the first bad argument.
func NewAdaptive(ratio, minPerSecond float64, maxWait time.Duration) (*Adaptive, error) {
	p, err := newPacing("NewAdaptive", ratio, minPerSecond, maxWait)
	if err != nil {
		return nil, err
	}
	b := &Adaptive{pace: p}
	for i := range b.snaps {
		// Stale from the start: what comes before the first snapshot came
		// at times unknown (see since).
		b.snaps[i].at = p.last.Add(-2 * adaptiveWindow)
	}
	return b, nil
}

// Holding reports whether first attempts are held now: one atomic load,
// which the retry layer reads before it asks HoldFirst.
func (b *Adaptive) Holding() bool { return b.holding.Load() }

// RecordAttempt counts attempt n's result: first attempts set the pace,
// retries' successes scale it, and failures may hold first attempts.
func (b *Adaptive) RecordAttempt(_ context.Context, n int, success bool) {
	if n <= 1 {
		if b.firsts.Add(1)%tickEvery == 0 {
			b.tick(false)
		}
		if !success && b.firstFail.Add(1)%failTickEvery == 0 {
			b.tick(true)
		}
		return
	}
	if success {
		b.retryOK.Add(1)
	}
	if b.retries.Add(1)%failTickEvery == 0 {
		b.tick(true)
	}
}

// tickEvery is how many first attempts go between two chances to take a
// snapshot: snapshots are otherwise taken only when a retry or a held
// first attempt asks, and a budget that took none during a long healthy
// spell could not tell the attempts of that spell from a herd's.
// failTickEvery is how many failed first attempts, or retries, go between
// two chances to work the rates out (whether to hold first attempts, how
// retries fare), for the callers that do not ask for retries.
const (
	tickEvery     = 64
	failTickEvery = 8
)

// tick takes a snapshot when one is due and, when decide is set, decides
// whether first attempts are held, unless another goroutine holds the
// lock: a first attempt never waits on it.
func (b *Adaptive) tick(decide bool) {
	if !b.mu.TryLock() {
		return
	}
	defer b.mu.Unlock()
	now := time.Now()
	if decide {
		b.rates(now, adaptiveWindow)
	} else {
		b.snapshot(now)
	}
}

// ReserveRetry takes a retry's token: the wait until it is due, or a
// refusal when that would be longer than maxWait or the budget's own. Its
// Cancel gives the token back.
func (b *Adaptive) ReserveRetry(_ context.Context, maxWait time.Duration) core.Reservation {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	horizon := adaptiveWindow
	if maxWait > 0 && maxWait < b.pace.maxWait {
		horizon = min(horizon, maxWait)
	}
	rate, hold := b.rates(now, horizon)
	res := b.pace.Reserve(now, rate, maxWait)
	if !res.OK {
		return res
	}
	charged := hold > 0
	if charged {
		b.pace.charge(now, hold)
	}
	giveBack := res.Cancel
	res.Cancel = func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		giveBack()
		if charged {
			b.pace.held++
		}
	}
	return res
}

// HoldFirst answers how long a call's first attempt, held for held so
// far, waits, and whether it asks again after that: 0 (it goes now)
// unless more than half of the recent attempts failed; else it waits for
// a turn at twice the rate of recent successes, asking again every tenth
// of a second or so until its turn is near, for at most the budget's
// MaxWait in all, and then goes. A call with a deadline is not held while
// recent retries succeed. Once the hold ends, a call held before still
// takes a turn, at the rate it would be held to. While nothing is held it
// costs one atomic load.
func (b *Adaptive) HoldFirst(ctx context.Context, held time.Duration) (wait time.Duration, again bool) {
	if held == 0 && !b.holding.Load() {
		b.countHeld(held, 0, false)
		return 0, false
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	_, hold := b.rates(now, adaptiveWindow)
	_, deadline := ctx.Deadline()
	switch {
	case hold > 0 && !(deadline && b.pace.recent >= helpfulShare):
		// A call with a deadline is not held while recent retries
		// succeed: the hold would spend the time its retries need (an
		// overload's).
		wait, again = b.pace.hold(now, hold, held)
	case hold <= 0 && held > 0:
		// The hold has ended: the calls it held drain at the rate the
		// provider was last answering, not all in the same tenth of a
		// second, which would overload it again as it recovers.
		wait, again = b.pace.hold(now, b.drain, held)
	}
	b.countHeld(held, wait, again)
	return wait, again
}

// countHeld counts a call held when it came (its first answer, at held 0,
// is a wait) and its release (the answer that lets it go, once it was
// held), whatever path the answer took: the calls that came are the first
// attempts made, less those released, plus those that came held.
func (b *Adaptive) countHeld(held, wait time.Duration, again bool) {
	if held == 0 && (wait > 0 || again) {
		b.arrived.Add(1)
	}
	if !again && (held > 0 || wait > 0) {
		b.released.Add(1)
	}
}

// Rate returns the retries a second the budget allows now.
func (b *Adaptive) Rate() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	rate, _ := b.rates(time.Now(), adaptiveWindow)
	return max(rate, minRate)
}

// rates takes a snapshot when one is due and works out the retries' rate
// over the window, and the rate first attempts are held to over the last
// tenth to fifth of it (0: not held), which it publishes for HoldFirst.
// A herd's first attempts are read over horizon: the window, or the part
// of a caller's deadline its retry may wait, if shorter. It runs under
// b.mu.
func (b *Adaptive) rates(now time.Time, horizon time.Duration) (retry, hold float64) {
	cur := b.snapshot(now)
	w, span, herd := b.since(now, cur, adaptiveWindow)
	b.pace.spaced = herd
	s, sspan, _ := b.since(now, cur, adaptiveSlot)
	// The retries' share is the recent one when recent retries are a
	// quorum: an outage that follows many successful retries (a herd's)
	// shows at once, not once the window has forgotten them.
	retries, ok := w.retries, w.retryOK
	if s.retries >= adaptiveQuorum {
		retries, ok = s.retries, s.retryOK
	}
	h, hspan := b.holdSpan(now, cur, s, sspan, w)
	// Probes follow the calls that come, not the first attempts made:
	// those fall as calls are held, and the probes would fall with them.
	hold, b.drain = b.pace.holdRate(h.firsts+h.retries, h.failed(), hspan, float64(max(w.calls(), w.firsts))/span.Seconds())
	presume := b.presumed(now, w, s, h, hold)
	// A herd's first attempts earn retries as a window's worth of first
	// attempts do, not at the rate of the moment they came in: read over
	// that moment, a herd of 400 earns a pace of thousands a second, and
	// retries promised at it overload the provider the herd just did, and
	// fall due in the outage that may follow. A retry that may wait only
	// part of its caller's deadline reads the herd over that part: a turn
	// after the deadline is worth nothing to it, and read over a second a
	// herd of 25 callers with 240 ms each would have 3 retries among them
	// (84 % success in the deadline storms' overload against the peers'
	// 89 %, where each has 5 attempts).
	rspan := span
	if herd {
		rspan = max(span, horizon)
	}
	retry = b.pace.rate(w.firsts, retries, ok, rspan, presume)
	if herd {
		// What the provider answers is a rate it can take retries at: a
		// herd's retries go at Ratio of the answers of the last tenth
		// of a second when that is more than its first attempts earn
		// (a provider with room after the herd: clients that wait for
		// their answers before they call again).
		served := s.firsts - s.firstFail + s.retryOK
		retry = max(retry, b.pace.ratio*b.pace.recent*float64(served)/max(sspan, adaptiveSlot).Seconds())
	}
	b.holding.Store(hold > 0)
	return retry, hold
}

// presumed is the success share presumed of the retries missing from a
// quorum, from the window w, its last tenth s, the counts h the hold is
// judged by, and the hold's rate. It runs under b.mu.
func (b *Adaptive) presumed(now time.Time, w, s, h counts, hold float64) float64 {
	presume := b.pace.lastShare
	// Retries missing from a quorum fare at least as first attempts do:
	// after an outage, retries refused at the floor (a deadline's cannot
	// wait for its token) would otherwise never be made to show that the
	// provider is back, and the floor would outlast the outage.
	firsts, firstFail := w.firsts, w.firstFail
	if s.firsts >= adaptiveQuorum {
		firsts, firstFail = s.firsts, s.firstFail
	}
	if firsts >= adaptiveQuorum {
		presume = max(presume, float64(firsts-firstFail)/float64(firsts))
	}
	switch {
	case hold <= 0:
		b.heldSince = time.Time{}
	case b.heldSince.IsZero():
		b.heldSince = now
	case now.Sub(b.heldSince) >= sustainedHold && h.firsts+h.retries > 0:
		// Not a herd's failures: a herd's retries succeed and end the
		// hold sooner. Retries not yet seen fare as the attempts do.
		presume = min(presume, float64(h.firsts+h.retries-h.failed())/float64(h.firsts+h.retries))
	}
	return presume
}

// sustainedHold is how long first attempts are held before the retries
// not yet seen are presumed to fail as often as the attempts do.
const sustainedHold = adaptiveWindow / 2

// holdSpan returns the counts whether to hold first attempts is judged on,
// and their span: the shortest recent span, from a tenth of the window
// (s) up to the whole of it (w), in which a quorum of attempts failed. A
// large provider's clients fail a quorum within the tenth, so an outage
// shows at once; a small one's (a few slots, a few dozen calls a second)
// take longer to, and a fixed tenth of a second would never see a quorum
// fail there, nor hold anything back. It runs under b.mu.
func (b *Adaptive) holdSpan(now time.Time, cur, s counts, sspan time.Duration, w counts) (counts, time.Duration) {
	if s.failed() >= adaptiveQuorum || w.failed() < adaptiveQuorum {
		return s, sspan
	}
	for d := 2 * adaptiveSlot; d <= adaptiveWindow; d += adaptiveSlot {
		if c, span, _ := b.since(now, cur, d); c.failed() >= adaptiveQuorum {
			return c, span
		}
	}
	return s, sspan // not reached: w has a quorum
}

// snapshot returns the counts now, which it keeps as a snapshot when one
// is due. It runs under b.mu.
func (b *Adaptive) snapshot(now time.Time) counts {
	cur := counts{at: now, firsts: b.firsts.Load(), firstFail: b.firstFail.Load(),
		retries: b.retries.Load(), retryOK: b.retryOK.Load(),
		arrived: b.arrived.Load(), released: b.released.Load()}
	if newest := b.snaps[(b.next+adaptiveSnaps-1)%adaptiveSnaps]; now.Sub(newest.at) >= adaptiveSlot {
		b.snaps[b.next] = cur
		b.next = (b.next + 1) % adaptiveSnaps
	}
	return cur
}

// since returns the counts made since the newest snapshot at least d old
// (or the oldest there is), and the span they were made in.
// Snapshots are taken when a retry asks and every tickEvery first
// attempts, so the newest one before a quiet spell may be long past, and
// the attempts made since it few or a herd's: when it is older than two
// windows and they are ten or more, they are taken to have come in a
// tenth of d before the first snapshot after it, as a herd does (every
// client at once after a deploy or a cron), not spread over the quiet
// spell, which would read them as a trickle; herd says so. Otherwise
// the span is at least d, so that a few attempts are not read as a high
// rate. It runs under b.mu.
func (b *Adaptive) since(now time.Time, cur counts, d time.Duration) (c counts, span time.Duration, herd bool) {
	from := b.snaps[b.next]
	after := now // the first snapshot after from
	for i := range adaptiveSnaps {
		s := b.snaps[(b.next+i)%adaptiveSnaps]
		if now.Sub(s.at) >= d {
			from, after = s, now
		} else if after == now && s.at.After(from.at) {
			after = s.at
		}
	}
	c = cur.sub(from)
	if now.Sub(from.at) >= 2*adaptiveWindow && c.firsts+c.retries >= adaptiveQuorum {
		return c, now.Sub(after) + d/10, true
	}
	return c, max(now.Sub(from.at), d), false
}

// Pacing is the arithmetic of Adaptive, for a Budget that counts the
// attempts elsewhere (the fleet module's counts a whole fleet's, in
// Redis): the rate at which retries may go, from the attempts of a window,
// and the token bucket that paces them at that rate. It is not safe for
// concurrent use: its owner serializes the calls.
type Pacing struct {
	ratio, minRate float64
	maxWait        time.Duration
	tokens         float64   // may go negative: retries reserved ahead
	last           time.Time // when tokens were last refilled
	tail           time.Time // when the last turn promised falls due
	spaced         bool      // the rate is read from a herd's attempts: space the turns
	lastShare      float64   // the success share of the last window with a quorum of retries
	recent         float64   // the success share the last rate was worked out with
	held           float64   // the first attempts' tokens: may go negative too
	heldLast       time.Time // when held was last refilled
}

// NewPacing returns a Pacing with NewAdaptive's setting, which it
// checks as NewAdaptive does.
func NewPacing(ratio, minPerSecond float64, maxWait time.Duration) (*Pacing, error) {
	return newPacing("NewPacing", ratio, minPerSecond, maxWait)
}

func newPacing(fn string, ratio, minPerSecond float64, maxWait time.Duration) (*Pacing, error) {
	switch {
	case !(ratio > 0 && ratio <= 1):
		return nil, fmt.Errorf("budget: %s: ratio is %v, must be in (0, 1]", fn, ratio)
	case !(minPerSecond >= 0) || math.IsInf(minPerSecond, 0):
		return nil, fmt.Errorf("budget: %s: minPerSecond is %v, must be finite and at least 0", fn, minPerSecond)
	case maxWait <= 0:
		return nil, fmt.Errorf("budget: %s: maxWait is %v, must be positive", fn, maxWait)
	}
	now := time.Now()
	return &Pacing{ratio: ratio, minRate: minPerSecond, maxWait: maxWait, tokens: 1, last: now, lastShare: 1, held: 1, heldLast: now}, nil
}

// Rate returns the retries a second allowed after a window of span in which
// firsts first attempts and retries retries were made, ok of which
// succeeded: ratio × the rate of first attempts × the retries' success
// share, at least minPerSecond.
func (p *Pacing) Rate(firsts, retries, ok int64, span time.Duration) float64 {
	return p.rate(firsts, retries, ok, span, p.lastShare)
}

// rate is Rate with the share presumed of the retries missing from a
// quorum.
func (p *Pacing) rate(firsts, retries, ok int64, span time.Duration, presume float64) float64 {
	p.recent = p.share(retries, ok, presume)
	return max(p.minRate, p.ratio*p.recent*float64(firsts)/span.Seconds())
}

// share is the success share of n retries of which ok succeeded. Fewer
// than a quorum are made up to one with retries that fare as presume says:
// for Rate, as they did in the last window that had a quorum (presumed all
// successes at first), which a quorum updates; for Adaptive, at least as
// well as the window's first attempts. A long outage thus stays at the
// floor once its failures have left the window, instead of being presumed
// over, and each second letting a burst of retries through; and when the
// provider is back, each retry that succeeds (and, for Adaptive, the first
// attempts' successes) raises the pace until a quorum speaks for itself.
func (p *Pacing) share(n, ok int64, presume float64) float64 {
	if n >= adaptiveQuorum {
		p.lastShare = float64(ok) / float64(n)
		return p.lastShare
	}
	return (float64(ok) + float64(adaptiveQuorum-n)*presume) / adaptiveQuorum
}

// Reserve adds the tokens earned at rate since its last call (the bucket
// holds at most burstSpan, a hundredth of a second, of them, and at least
// one) and takes one: the wait until it is due, or a refusal, taking
// nothing, when that would be longer than the setting's maxWait. Its
// Cancel gives the token back; call it as Reserve is called, serialized
// with the Pacing's other calls.
//
// While Adaptive reads its window as a herd's, each retry's turn also
// comes at least a turn (at the rate it asks at) after the last turn
// promised, as a schedule of turns (GCRA) keeps them: the rate then
// rises with every failure of the herd counted, and a debt repaid at the
// last rate would promise every retry of the herd the same moment. The
// turns promised while the herd's first attempts are still being counted,
// at the low rate they earn so far, thus hold its later retries behind
// them, and most are refused: a herd's retries meet a provider its first
// attempts have just overloaded.
//
// A maxWait shorter than the wait and than the setting's, but positive,
// is the part of the caller's deadline the retry may spend waiting: the
// pace would hold it longer, into a certain failure. The budget then
// decides with what it knows of recent retries: where they have been
// succeeding (at least helpfulShare of them, as the rate was last worked
// out), the retry goes after maxWait, its token taken as debt (up to what
// the pace repays within the setting's maxWait), so later retries wait the
// longer; where they have been failing (an outage, a collapse), it is
// refused. Waiting maxWait rather than going now spreads the deadlines'
// retries over the time they have, where going now would bunch them just
// after the failures they follow. A maxWait of 0 (a hedge's) never
// borrows.
func (p *Pacing) Reserve(now time.Time, rate float64, maxWait time.Duration) core.Reservation {
	rate = max(rate, minRate)
	burst := max(rate*burstSpan.Seconds(), 1)
	p.tokens = min(p.tokens+rate*now.Sub(p.last).Seconds(), burst)
	p.last = now
	if p.tokens >= 1 {
		return p.take(now, 0, 1)
	}
	wait := time.Duration((1 - p.tokens) / rate * float64(time.Second))
	limit := min(maxWait, p.maxWait)
	if p.spaced && limit == p.maxWait {
		// The debt is repaid faster as the rate rises, and a herd's
		// retries, asking as its failures are counted and each count
		// raises the rate, would be promised turns that all fall due
		// together: each goes a turn after the last one promised. A
		// retry pressed by its caller's deadline is not spaced: its wait
		// is bounded by the deadline's half, and so is its share of a
		// bunch.
		wait = max(wait, p.tail.Sub(now)+time.Duration(float64(time.Second)/rate))
	}
	switch {
	case wait <= limit:
		return p.take(now, wait, 1)
	case maxWait < p.maxWait && maxWait > 0 && p.recent >= helpfulShare:
		// The debt is bounded by what the pace repays within its maxWait,
		// so that calls without a deadline are paced, not refused, once
		// the deadlines' retries stop.
		return p.take(now, limit, p.tokens-max(p.tokens-1, 1-rate*p.maxWait.Seconds()))
	}
	return core.Reservation{}
}

// take takes n tokens for a retry that goes after delay.
func (p *Pacing) take(now time.Time, delay time.Duration, n float64) core.Reservation {
	p.tokens -= n
	if due := now.Add(delay); due.After(p.tail) {
		p.tail = due
	}
	return core.Reservation{Delay: delay, OK: true, Cancel: func() { p.tokens += n }}
}

// helpfulShare is the success share of recent retries at which a retry the
// pace would hold past the caller's deadline goes now instead.
const helpfulShare = 0.2

// holdRate returns the rate at which first attempts may go after a span in
// which attempts attempts were made and failed of them failed, when first
// attempts came at firstsPerSecond over the window: 0 (they go at once)
// unless at least a quorum of ten failed and more than half did; else
// twice the rate of the successes, and at least an eighth of the first
// attempts' rate, so that probes find a provider that is back within
// milliseconds, and at least minPerSecond. It also returns that rate
// whether or not attempts are held: the rate at which the calls held
// before go once the hold ends.
func (p *Pacing) holdRate(attempts, failed int64, span time.Duration, firstsPerSecond float64) (hold, drain float64) {
	ok := attempts - failed
	drain = max(p.minRate, holdFactor*float64(ok)/span.Seconds(), holdProbes*firstsPerSecond)
	if failed < adaptiveQuorum || holdFactor*ok >= attempts {
		return 0, drain
	}
	return drain, drain
}

// hold takes a turn for a first attempt held for held so far, at rate
// (from holdRate), from a token bucket of its own that holds at most a
// hundredth of a second of them. It answers how long the attempt waits
// and whether it asks again after that: 0 and false when a turn is free,
// or when it has been held for the setting's maxWait already; the wait
// for its turn and false when the turn is due within a tenth of a second
// (the turn is taken); else a tenth of a second, less a random part of up
// to half, and true, taking nothing, so that held attempts ask again as
// the rate rises (when what goes succeeds), not all at once, and none
// keeps a turn promised at a rate since gone.
func (p *Pacing) hold(now time.Time, rate float64, held time.Duration) (wait time.Duration, again bool) {
	if held >= p.maxWait {
		return 0, false
	}
	rate = max(rate, minRate)
	p.refillHeld(now, rate)
	wait = time.Duration(max(1-p.held, 0) / rate * float64(time.Second))
	if wait <= adaptiveSlot {
		p.held--
		return wait, false
	}
	wait = min(adaptiveSlot, p.maxWait-held)
	return wait - time.Duration(rand.Float64()*float64(wait/2)), true
}

// charge takes a turn of the first attempts' bucket for a retry, while
// first attempts are held: the held go at the rate less the retries'.
func (p *Pacing) charge(now time.Time, rate float64) {
	p.refillHeld(now, rate)
	p.held--
}

// refillHeld adds the first attempts' tokens earned at rate since the
// last refill, up to a hundredth of a second of them, and forgives what
// turns taken at a higher rate owe past a tenth of a second at this one:
// turns promised at a rate since gone (a herd's, read from its first
// attempts) would otherwise hold new first attempts while the provider
// idles, long after those turns went.
func (p *Pacing) refillHeld(now time.Time, rate float64) {
	rate = max(rate, minRate)
	p.held = min(p.held+rate*now.Sub(p.heldLast).Seconds(), max(rate*burstSpan.Seconds(), 1))
	p.held = max(p.held, -rate*adaptiveSlot.Seconds())
	p.heldLast = now
}

// A Holder is a budget that may also hold a call's first attempt back, as
// Adaptive does while its provider fails most attempts, and the fleet
// module's Budget does. The retry layer asks it before the first attempt
// of each Invoke, Batch (once) and Stream (not of a Resume, which
// continues a call) and waits as long as it answers, asking again while it
// says so; it does not wait, and the attempt goes, when the caller's
// deadline would pass during the wait. With Adaptive, an Invoke's or a
// Stream's retry whose turn the budget set is held so too, when the turn
// comes while first attempts are held: promised at the pace of its
// asking, it would otherwise go into an outage that began since.
type Holder interface {
	// HoldFirst answers how long a first attempt already held for held
	// waits (0 for none), and whether it asks again after that wait
	// rather than go. It never refuses: an attempt held for as long as the
	// budget holds any is answered 0, false.
	HoldFirst(ctx context.Context, held time.Duration) (wait time.Duration, again bool)
}

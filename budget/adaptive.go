package budget

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steadfast-go/steadfast/core"
)

// Adaptive is the law of the package doc over this process's attempts, a
// retry.Budget safe for concurrent use: share one per provider. A first
// attempt that succeeds unthrottled costs two atomic operations: it reads
// the throttle worked out at the last refusal or read, and accepted
// answers move into the window foldEvery at a time (and at every read),
// up to foldEvery − 1 of them placed a little late.
type Adaptive struct {
	s Setting

	throttle            atomic.Uint64 // the throttle last worked out, as float64 bits
	okFirsts, okRetries atomic.Int64  // accepted answers not yet in the window

	mu   sync.Mutex
	win  window
	pace Pacer
}

// foldEvery is how many accepted answers are moved into the window at once.
const foldEvery = 4

// NewAdaptive returns an Adaptive of setting s. It reports an error naming
// the first parameter out of its range.
func NewAdaptive(s Setting) (*Adaptive, error) {
	if err := s.check("NewAdaptive"); err != nil {
		return nil, err
	}
	now := time.Now()
	return &Adaptive{s: s, win: newWindow(now, s.Window), pace: Pacer{maxWait: s.MaxWait, tokens: 1, last: now}}, nil
}

// Reserve takes attempt n's turn (n = 1 for a call's first). Any attempt
// is refused with the throttle's probability (see Throttle); a first
// attempt that is not goes at once; a retry that is not waits for its
// token, at most maxWait and the setting's MaxWait, else is refused; its
// Cancel gives the token back. Nothing is counted until the answer.
func (b *Adaptive) Reserve(_ context.Context, n int, maxWait time.Duration) core.Reservation {
	if n <= 1 && b.throttle.Load() == 0 {
		return core.Reservation{OK: true}
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if p := b.read(now); p > 0 && rand.Float64() < p {
		return core.Reservation{}
	}
	if n <= 1 {
		return core.Reservation{OK: true}
	}
	res := b.pace.Reserve(now, b.s.retryRate(b.win.sum), maxWait)
	if giveBack := res.Cancel; giveBack != nil {
		res.Cancel = func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			giveBack()
		}
	}
	return res
}

// RecordAttempt counts the answer to attempt n (1 for a first attempt):
// accepted, or refused (a retryable failure).
func (b *Adaptive) RecordAttempt(_ context.Context, n int, accepted bool) {
	if accepted {
		ok := &b.okRetries
		if n <= 1 {
			ok = &b.okFirsts
		}
		if ok.Add(1)%foldEvery != 0 {
			return
		}
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if !accepted {
		b.win.add(now, n, false, 1)
	}
	b.read(now)
}

// Rate returns the retries a second the budget allows now:
// Ratio · firsts / Window + Floor over the window.
func (b *Adaptive) Rate() float64 {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.read(now)
	return b.s.retryRate(b.win.sum)
}

// Throttle returns the probability with which an attempt is refused now:
// max(0, (requests − K·accepts − Padding) / (requests + Padding)) over the
// window. The retry layer reports it as the gauge retry.budget.throttle.
func (b *Adaptive) Throttle() float64 {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.read(now)
}

// read moves the accepted answers counted apart into the window, advances
// it to now, and returns the throttle, kept for Reserve's fast path. It
// runs under b.mu.
func (b *Adaptive) read(now time.Time) float64 {
	if k := b.okFirsts.Swap(0); k > 0 {
		b.win.add(now, 1, true, k)
	}
	if k := b.okRetries.Swap(0); k > 0 {
		b.win.add(now, 2, true, k)
	}
	b.win.advance(now)
	p := b.s.throttle(b.win.sum)
	b.throttle.Store(math.Float64bits(p))
	return p
}

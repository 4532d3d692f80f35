package concurrency

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/steadfast-go/steadfast/core"
)

// Queueing is a family of provider models unlike Provider: a server that
// serves Capacity calls at once, queues the next Capacity·QueueShare in
// arrival order (their wait delays the first chunk), and answers 429
// after RejectAfter beyond them; a call's prefill (its time to the first
// chunk, unloaded) grows with its prompt, whose lengths are spread so
// that the unloaded p99 of that time is Spread times its median
// FirstChunk (1 is uniform prompts); then Tokens (uniform in [MinTokens,
// MaxTokens]) at TokenTime each. Nothing in it is tuned to a limiter:
// a limit at Capacity meets no queue and no 429.
type Queueing struct {
	QueueShare            float64
	Spread                float64
	FirstChunk, TokenTime time.Duration
	RejectAfter           time.Duration
	MinTokens, MaxTokens  int
}

// QueueingModel is the family's member with a spread of prompts: its
// FirstChunk and Spread are the real traffic (p50 0.35 s, p99
// 0.79 s unloaded).
func QueueingModel(spread float64) Queueing {
	return Queueing{QueueShare: 0.5, Spread: spread, FirstChunk: 350 * time.Millisecond, TokenTime: 10 * time.Millisecond,
		RejectAfter: 20 * time.Millisecond, MinTokens: 10, MaxTokens: 200}
}

// Spreads are the family's prompt spreads: uniform, real traffic, wide.
var Spreads = []float64{1, 2.26, 4}

// QueueProvider is a Queueing server with a capacity a run may change.
type QueueProvider struct {
	m        Queueing
	sigma    float64
	mu       sync.Mutex
	capacity int
	serving  int
	queue    []chan struct{} // closed when the call is served
	rng      *rand.Rand
	// ok and limited count answers and 429s; busy is the slot time
	// answered calls held (a call's time in service once it ends).
	ok, limited int
	busy        time.Duration
}

// NewQueueProvider returns a Queueing server of capacity.
func NewQueueProvider(m Queueing, capacity int, seed uint64) *QueueProvider {
	return &QueueProvider{m: m, sigma: math.Log(m.Spread) / 2.3263, capacity: capacity, rng: rand.New(rand.NewPCG(seed, 11))}
}

// SetCapacity changes the capacity; calls queued beyond a smaller one
// wait for slots to free.
func (p *QueueProvider) SetCapacity(c int) {
	p.mu.Lock()
	p.capacity = c
	p.serveQueued()
	p.mu.Unlock()
}

// Capacity is the capacity now.
func (p *QueueProvider) Capacity() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.capacity
}

// Counts returns the answers, the 429s, and the slot time answered calls
// held.
func (p *QueueProvider) Counts() (ok, limited int, busy time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ok, p.limited, p.busy
}

// draw returns a call's prefill and its answer's length.
func (p *QueueProvider) draw() (prefill, rest time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	prefill = time.Duration(float64(p.m.FirstChunk) * math.Exp(p.sigma*p.rng.NormFloat64()))
	tokens := p.m.MinTokens + p.rng.IntN(p.m.MaxTokens-p.m.MinTokens+1)
	return prefill, time.Duration(tokens) * p.m.TokenTime
}

// enter serves the call at once, queues it (returning the channel
// closed when it is served), or refuses it.
func (p *QueueProvider) enter() (wait chan struct{}, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.serving < p.capacity && len(p.queue) == 0 {
		p.serving++
		return nil, true
	}
	if float64(len(p.queue)) < math.Floor(float64(p.capacity)*p.m.QueueShare) {
		w := make(chan struct{})
		p.queue = append(p.queue, w)
		return w, true
	}
	p.limited++
	return nil, false
}

// leaveQueue takes a call that gave up out of the queue; it reports
// false when the call was served meanwhile (its slot is then its own).
func (p *QueueProvider) leaveQueue(w chan struct{}) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.queue {
		if x == w {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			return true
		}
	}
	return false
}

// leave frees a slot, held for held, for the next queued call.
func (p *QueueProvider) leave(answered bool, held time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.serving--
	if answered {
		p.ok++
		p.busy += held
	}
	p.serveQueued()
}

// serveQueued moves queued calls into free slots, under p.mu.
func (p *QueueProvider) serveQueued() {
	for p.serving < p.capacity && len(p.queue) > 0 {
		close(p.queue[0])
		p.queue = p.queue[1:]
		p.serving++
	}
}

// Stream answers a stream: its first chunk after its queue wait and
// prefill, then the rest of the answer as one chunk; or a 429.
func (p *QueueProvider) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	wait, ok := p.enter()
	if !ok {
		time.Sleep(p.m.RejectAfter)
		return nil, errLimited
	}
	prefill, rest := p.draw()
	ch := make(chan any)
	go func() {
		defer close(ch)
		if wait != nil {
			select {
			case <-wait:
			case <-ctx.Done():
				if p.leaveQueue(wait) {
					return
				}
			}
		}
		start := time.Now()
		done := chunks(ctx, ch, prefill, rest)
		p.leave(done, time.Since(start))
	}()
	return ch, nil
}

// Invoke is a stream read to its end.
func (p *QueueProvider) Invoke(ctx context.Context, in any, opts ...core.Option) (any, error) {
	ch, err := p.Stream(ctx, in, opts...)
	return readAll(ctx, ch, err)
}

// Batch is not used.
func (p *QueueProvider) Batch(context.Context, []any, ...core.Option) ([]any, error) {
	return nil, errors.New("concurrency: no batches")
}

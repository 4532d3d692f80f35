package retry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/genai"
	"github.com/steadfast-go/steadfast/internal/usage"
)

// AttemptInfo describes the attempt a context belongs to. In a Batch an
// attempt is a round: Attempt is the round's number, which is also the
// attempt number of every item sent in it (an item is sent in every round
// until it succeeds or ends).
type AttemptInfo struct {
	// Attempt is the attempt's number, 1-based.
	Attempt int
	// MaxAttempts is the most attempts the call may make (MaxRetries + 1).
	MaxAttempts int
	// InvocationID is the same for every attempt of one logical call and
	// unique across calls: a side-effecting tool uses it as its
	// idempotency key. In a Batch it identifies the Batch call, whose
	// items share it: key per item by InvocationID and the item's input.
	InvocationID string
	// Operation is the call's resolved operation, "" when it has none.
	Operation string
	// Retries is how many times the request was sent before this attempt,
	// by this RetryRunnable and every one whose attempt it runs inside
	// (with Nested "once", the default, the outer layer's retries): what
	// the OpenAI and Anthropic SDKs send as X-Stainless-Retry-Count, so
	// that a nested layer making its one attempt does not say 0 again.
	Retries int
}

// AttemptFromContext returns the attempt that ctx was handed to, and false
// when ctx did not come from a RetryRunnable.
func AttemptFromContext(ctx context.Context) (AttemptInfo, bool) {
	a, ok := ctx.Value(attemptKey{}).(*attemptCtx)
	if !ok {
		return AttemptInfo{}, false
	}
	return AttemptInfo{
		Attempt:      int(a.attempt),
		MaxAttempts:  int(a.maxAttempts),
		InvocationID: a.root.invocationID(),
		Operation:    a.operation,
		Retries:      a.retries(),
	}, true
}

// retries is AttemptInfo.Retries: the request's sends before attempt a,
// by its layer and every layer whose attempt it runs inside.
func (a *attemptCtx) retries() int {
	n := 0
	for o, ok := a, true; ok; o, ok = o.root.Context.Value(attemptKey{}).(*attemptCtx) {
		n += int(o.attempt) - 1
	}
	return n
}

type attemptKey struct{}

// nesting returns how many RetryRunnables' attempts ctx runs inside: 0
// for a call of its own, 1 inside one layer's attempt.
func nesting(ctx context.Context) int {
	n := 0
	for a, ok := ctx.Value(attemptKey{}).(*attemptCtx); ok; a, ok = a.root.Context.Value(attemptKey{}).(*attemptCtx) {
		n++
	}
	return n
}

// attemptCtx carries the attempt's metadata. It is a Context itself, rather
// than a context.WithValue holding a struct, so an attempt costs one
// allocation. The call's number is drawn, and the InvocationID string
// built, only when someone asks: the success path pays for neither.
type attemptCtx struct {
	context.Context
	root        *attemptCtx // the call's first attempt, which holds its number
	attempt     int32
	maxAttempts int32
	call        atomic.Uint64 // on root only; 0 until first asked
	operation   string
	// state is the call's core.State, on root only, unless the call
	// inherited one from its context (an outer call's, or one given back
	// with core.WithState). Its zero value costs nothing until a
	// decorator stores something in it.
	state core.State
	// gen is the attempt's inference in the GenAI conventions' mode, nil
	// otherwise (and in a Batch, whose items have their own).
	gen *genai.Slot
}

// meteredAttempt is an attempt's context when the call counts tokens: the
// attempt's Meter, and on the first attempt the call's, are in the same
// allocation as its attemptCtx. Calls that count none keep the smaller
// attemptCtx.
type meteredAttempt struct {
	attemptCtx
	meter usage.Meter // the attempt's tokens
	call  usage.Meter // the call's, on the first attempt only
}

func (c *meteredAttempt) Value(key any) any {
	if key == (usage.Key{}) {
		return &c.meter
	}
	return c.attemptCtx.Value(key)
}

func (c *attemptCtx) invocationID() string {
	if cont := continuationFrom(c.Context); cont != nil && cont.InvocationID != "" {
		return cont.InvocationID
	}
	id := c.call.Load()
	if id == 0 {
		c.call.CompareAndSwap(0, callCounter.Add(1))
		id = c.call.Load()
	}
	return processID + "-" + strconv.FormatUint(id, 16)
}

func (c *attemptCtx) Value(key any) any {
	switch key {
	case attemptKey{}:
		return c
	case continuationKey{}:
		return nil // the call's own: calls nested in its attempts start afresh
	case itemKey:
		return nil // an outer Batch's items are not this attempt's: its own are above it
	case genai.Key{}:
		return c.gen // nil hides an outer layer's: this attempt's requests are not its
	case stateKey:
		if s := c.root.Context.Value(key); s != nil {
			return s // the call's context had one: the call keeps it
		}
		return &c.root.state
	}
	return c.Context.Value(key)
}

var (
	callCounter atomic.Uint64
	// processID makes invocation IDs unique across processes as well.
	processID = func() string {
		var b [8]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
		return hex.EncodeToString(b[:])
	}()
)

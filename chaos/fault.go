package chaos

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// kind is what a fault does.
type kind uint8

const (
	rateLimited kind = iota + 1
	rateLimitedInBody
	overloaded
	serverError
	quotaExhausted
	contextOverflow
	latency
	hang
	streamBroken
	streamStalled
	streamError
)

// kindNames are the faults' names, as the chaos.injected event gives them.
var kindNames = [...]string{
	rateLimited:       "rate_limited",
	rateLimitedInBody: "rate_limited_in_body",
	overloaded:        "overloaded",
	serverError:       "server_error",
	quotaExhausted:    "quota_exhausted",
	contextOverflow:   "context_overflow",
	latency:           "latency",
	hang:              "hang",
	streamBroken:      "stream_broken",
	streamStalled:     "stream_stalled",
	streamError:       "stream_error",
}

// inStream reports a fault of a stream's body, injected after its first
// chunks rather than instead of the call.
func (k kind) inStream() bool { return k >= streamBroken }

// A Fault is one failure a provider has, and when to inject it. Make one
// with a constructor (RateLimited, Overloaded, StreamBroken, …) and say
// when it fires with Rate, First or When: a Fault for which none of them
// is set never fires. When several are set, it fires only when all agree:
// the predicate says so, it has fired fewer than First times, and the
// seeded draw falls under the rate.
//
// A Fault is a value: its methods return a changed copy. Each Runnable or
// Transport it is given to keeps its own count and its own random
// sequence. A bad argument (a negative wait, a rate above 1) is reported
// by every call it would have been injected into, as an error naming it.
type Fault struct {
	kind     kind
	wait     time.Duration // RateLimited's Retry-After, RateLimitedInBody's hint, Latency's delay
	after    int           // stream faults: the chunks delivered first
	limit    int           // ContextOverflow's window, input and output
	input    int
	output   int
	provider Provider

	rate  float64
	seed  uint64
	rated bool
	first int
	when  func(context.Context) bool

	err error // the first bad argument
}

// RateLimited is a 429 whose headers say to retry after wait: OpenAI's
// and Anthropic's Retry-After (and OpenAI's retry-after-ms), Gemini's
// RetryInfo detail.
func RateLimited(retryAfter time.Duration) Fault {
	f := Fault{kind: rateLimited, wait: retryAfter}
	if retryAfter < 0 {
		f.err = fmt.Errorf("RateLimited(%v): the wait must not be negative", retryAfter)
	}
	return f
}

// RateLimitedInBody is a 429 that names its wait only in its message
// ("Please try again in 2.19s."), as OpenAI's token limits do when no
// header came.
func RateLimitedInBody(wait time.Duration) Fault {
	f := Fault{kind: rateLimitedInBody, wait: wait}
	if wait <= 0 {
		f.err = fmt.Errorf("RateLimitedInBody(%v): the wait must be positive", wait)
	}
	return f
}

// Overloaded is the provider out of capacity: Anthropic's 529
// overloaded_error, OpenAI's and Gemini's 503.
func Overloaded() Fault { return Fault{kind: overloaded} }

// ServerError is a 500.
func ServerError() Fault { return Fault{kind: serverError} }

// QuotaExhausted is a quota or a balance spent, which no retry refills:
// OpenAI's 429 insufficient_quota, Gemini's per-day RESOURCE_EXHAUSTED,
// Anthropic's 400 "Your credit balance is too low".
func QuotaExhausted() Fault { return Fault{kind: quotaExhausted} }

// ContextOverflow is a 400 saying the request does not fit the model's
// context window of limit tokens: input tokens of prompt, output asked
// for, in the provider's own words, so that llmhttp.ParseOverflow reads
// them and a Repair can lower the output. input+output must exceed limit.
func ContextOverflow(limit, input, output int) Fault {
	f := Fault{kind: contextOverflow, limit: limit, input: input, output: output}
	if limit <= 0 || input < 0 || output < 0 || input > math.MaxInt-output || input+output <= limit {
		f.err = fmt.Errorf("ContextOverflow(%d, %d, %d): want a positive limit and counts that exceed it", limit, input, output)
	}
	return f
}

// Latency delays the call by d, then makes it.
func Latency(d time.Duration) Fault {
	f := Fault{kind: latency, wait: d}
	if d <= 0 {
		f.err = fmt.Errorf("Latency(%v): the delay must be positive", d)
	}
	return f
}

// Hang never answers: the call ends when its context does.
func Hang() Fault { return Fault{kind: hang} }

// StreamBroken lets a stream deliver its first after chunks (a
// Transport's: server-sent events), then drops the connection
// (io.ErrUnexpectedEOF).
func StreamBroken(after int) Fault { return streamFault(streamBroken, "StreamBroken", after) }

// StreamStalled lets a stream deliver its first after chunks, then
// delivers nothing more, holding the connection, until the call's context
// ends.
func StreamStalled(after int) Fault { return streamFault(streamStalled, "StreamStalled", after) }

// StreamError lets a stream deliver its first after chunks, then ends it
// with an error event inside the 200, in the provider's format: OpenAI's
// server_error, Anthropic's overloaded_error, Gemini's UNAVAILABLE.
func StreamError(after int) Fault { return streamFault(streamError, "StreamError", after) }

func streamFault(k kind, name string, after int) Fault {
	f := Fault{kind: k, after: after}
	if after < 0 {
		f.err = fmt.Errorf("%s(%d): the chunks before the fault must not be negative", name, after)
	}
	return f
}

// Rate makes f fire at random, with probability p (from 0 to 1), drawn
// from a sequence seeded with seed: the same seed fires on the same calls
// of the same sequence of calls.
func (f Fault) Rate(p float64, seed uint64) Fault {
	f.rate, f.seed, f.rated = p, seed, true
	if (math.IsNaN(p) || p < 0 || p > 1) && f.err == nil {
		f.err = fmt.Errorf("%s: Rate(%v): want a probability from 0 to 1", f.Name(), p)
	}
	return f
}

// First makes f fire at most n times.
func (f Fault) First(n int) Fault {
	f.first = n
	if n < 1 && f.err == nil {
		f.err = fmt.Errorf("%s: First(%d): want at least 1", f.Name(), n)
	}
	return f
}

// When makes f fire only for the calls whose context pred accepts: a
// test's, a tenant's, a request carrying a header your middleware put in
// the context.
func (f Fault) When(pred func(context.Context) bool) Fault {
	f.when = pred
	if pred == nil && f.err == nil {
		f.err = fmt.Errorf("%s: When(nil): want a predicate", f.Name())
	}
	return f
}

// As makes f answer in p's format wherever it is injected. By default a
// Transport answers in the format of the request's provider (by its host,
// else its path: /v1/messages is Anthropic's, :generateContent Gemini's,
// anything else OpenAI's), and a Runnable in OpenAI's.
func (f Fault) As(p Provider) Fault {
	f.provider = p
	if p != OpenAI && p != Anthropic && p != Gemini && f.err == nil {
		f.err = fmt.Errorf("%s: As(%q): want chaos.OpenAI, chaos.Anthropic or chaos.Gemini", f.Name(), string(p))
	}
	return f
}

// Name is the fault's name, as the chaos.injected event gives it:
// "rate_limited", "stream_broken", ….
func (f Fault) Name() string {
	if int(f.kind) < len(kindNames) && f.kind != 0 {
		return kindNames[f.kind]
	}
	return "unknown"
}

// errZeroFault is the error of a Fault made without a constructor.
var errZeroFault = errors.New("a Fault made without a constructor (chaos.RateLimited, chaos.Overloaded, …)")

// armed is a Fault given to one Runnable or Transport, with its own count
// and random sequence.
type armed struct {
	Fault
	mu    sync.Mutex
	rng   *rand.Rand
	fired int
}

// arm returns the faults, each with a state of its own, and the first
// bad one's error.
func arm(faults []Fault) ([]*armed, error) {
	out := make([]*armed, 0, len(faults))
	for i, f := range faults {
		switch {
		case f.kind == 0:
			return nil, fmt.Errorf("chaos: fault %d: %w", i, errZeroFault)
		case f.err != nil:
			return nil, fmt.Errorf("chaos: fault %d: %w", i, f.err)
		}
		a := &armed{Fault: f}
		if f.rated {
			a.rng = rand.New(rand.NewPCG(f.seed, f.seed))
		}
		out = append(out, a)
	}
	return out, nil
}

// fires reports whether the fault fires for a call with ctx, and counts
// it when it does.
func (a *armed) fires(ctx context.Context) bool {
	if !a.rated && a.first == 0 && a.when == nil {
		return false // off: nothing says when
	}
	if a.when != nil && !a.when(ctx) {
		return false
	}
	if !a.rated && a.first == 0 {
		return true
	}
	if a.rated && a.rate == 0 {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.first > 0 && a.fired >= a.first {
		return false
	}
	if a.rated && a.rng.Float64() >= a.rate {
		return false
	}
	a.fired++
	return true
}

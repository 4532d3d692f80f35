// Package llmhttp is for writing an LLM provider adapter: a Runnable over
// an HTTP SDK (the modules under providers/ are built on it). It holds:
//
//   - the error an adapter hands to the retry layer: APIError, read as the
//     retry layer reads every error (StatusCode, RetryAfter, ErrorType,
//     CannotServe), and Classify, which adds what the response said
//     (Retry-After, retry-after-ms, x-should-retry, a wait in the
//     message) and the provider's verdict;
//   - AnswerError, an answer that came back but is no use (truncated,
//     filtered, empty);
//   - Pump, from an SDK's stream iterator to a core stream channel, with
//     the commit held until the first event with content;
//   - Response, the usage and finish reasons put on the attempt's span;
//   - RateLimits and RateLimitTracker, what a response's headers say of
//     the provider's limits, by which the ratelimit and pool packages pace
//     calls before the provider answers 429 (a Runnable that reports them
//     has their RateLimits method);
//   - Inference, where an adapter's request leaves: the GenAI
//     conventions' inference span, under a retry layer in that mode.
//
// It depends on no SDK, and of steadfast's public packages on core only.
package llmhttp

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/steadfast-go/steadfast/internal/genai"
	"github.com/steadfast-go/steadfast/internal/route"
	"github.com/steadfast-go/steadfast/internal/streams"
)

// APIError is a provider's error as the retry layer reads it: a status
// code, the server's Retry-After hint and the provider's error code. It
// wraps the SDK's error, which errors.As still finds.
//
// An adapter builds one from the SDK's error, sets Permanent or Dead when
// the provider's error code says so, and returns what Classify makes of
// it.
type APIError struct {
	Status int           // the HTTP status; 0 for an error event inside a stream
	Code   string        // the provider's error code or type, "" if none
	After  time.Duration // the server's hint; 0 if none
	Err    error         // the SDK's error
	// Message is the provider's own error message, which SDKs often leave
	// out of their error's text; Classify sets it when empty. ParseOverflow
	// reads it.
	Message string
	// Permanent says the provider's code means no retry fixes the call
	// (a prompt longer than the context window, an invalid request);
	// Classify turns it into the verdict Retryable() false.
	Permanent bool
	// Dead says the key or account that answered cannot serve any
	// request now (a revoked key, an exhausted quota, billing): a pool
	// takes that deployment out of rotation (CannotServe). It implies
	// Permanent.
	Dead bool
}

// Error is the SDK's message, followed by the provider's error code in
// parentheses when the message does not name it already: SDKs often leave
// the API's message out (openai-go does), and the code is what says why a
// call failed ("context_length_exceeded"). It never adds the request's
// content.
func (e *APIError) Error() string {
	msg := e.Err.Error()
	if e.Code != "" && !strings.Contains(msg, e.Code) {
		return msg + " (" + e.Code + ")"
	}
	return msg
}
func (e *APIError) Unwrap() error { return e.Err }

// StatusCode returns the HTTP status (retry rule 5).
func (e *APIError) StatusCode() int { return e.Status }

// RetryAfter returns the server's hint.
func (e *APIError) RetryAfter() time.Duration { return e.After }

// ErrorType returns the provider's code, for the error.type attribute; ""
// lets the retry layer fall back to the status code.
func (e *APIError) ErrorType() string { return e.Code }

// CannotServe reports Dead: the deployment that answered cannot serve any
// request, whatever the request, so a pool routes around it.
func (e *APIError) CannotServe() bool { return e.Dead }

// retryAfter reads the server's hint from retry-after-ms (milliseconds),
// else Retry-After (seconds, or an HTTP date). Malformed, negative or
// non-finite values are no hint.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if d, ok := duration(v, time.Millisecond); ok {
			return d, true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if d, ok := duration(v, time.Second); ok {
		return d, true
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d, true
		}
		return 0, true // a date already past: retry now
	}
	return 0, false
}

func duration(v string, unit time.Duration) (time.Duration, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, false
	}
	d := f * float64(unit)
	if d >= math.MaxInt64 {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(d), true
}

// SDKStream is the iterator shape of the SDKs' streams.
type SDKStream[T any] interface {
	Next() bool
	Current() T
	Err() error
	Close() error
}

// PumpConfig says how Pump reads an SDK stream of events of type T.
type PumpConfig[T any] struct {
	// Content reports whether an event carries content: text, a refusal,
	// a tool call. Events before the first that does are held back.
	Content func(T) bool
	// Adapt turns the stream's failure into the error delivered as its
	// last value (the provider's error adapter).
	Adapt func(error) error
	// Fail, when set, returns the failure an event reports in-band (an
	// error event inside a 200 stream), already adapted, or nil. Such an
	// event ends the stream with that error as its last value; before the
	// first event with content, it is the only value, so a retry layer
	// retries the attempt.
	Fail func(T) error
	// Observe, when set, sees every event read, on the pump's goroutine
	// (to gather the response's id, usage and finish reasons).
	Observe func(T)
	// ToolCall, when set, reports whether an event carries (a part of) a
	// tool call. Once one is delivered the consumer may have run the tool,
	// so a retry layer or a fallback does not start the stream again from
	// its input (RestartStreams, core.Reset) unless the Runnable says it is
	// idempotent.
	ToolCall func(T) bool
	// Done, when set, is called once the stream has ended, before its
	// failure, if any, is delivered as the last value and the channel is
	// closed (to record what Observe gathered, usage included: a retry
	// layer settles an attempt's tokens when its stream ends).
	Done func()
}

// Pump forwards the events of s to the returned channel as the SDK
// produced them, but holds back the events before the first one with
// content and delivers them with it: a stream that fails before any
// content delivers no event, only its error, so a retry layer never
// commits on a content-free event (a role-only delta, a message_start).
// Then, if s failed, its error passed through c.Adapt is the last value.
// The goroutine it starts ends when s ends or ctx is done, and closes s and
// the channel.
func Pump[T any](ctx context.Context, s SDKStream[T], c PumpConfig[T]) <-chan any {
	ch := make(chan any)
	go func() {
		defer close(ch)
		defer s.Close()
		last := func() error { // Done before the last value: what the stream cost is known when it ends
			if c.Done != nil {
				defer c.Done()
			}
			return pump(ctx, s, &c, ch)
		}()
		if last != nil {
			streams.Send(ctx, ch, last)
		}
	}()
	return ch
}

// pump forwards s's events to ch as Pump says, and returns the failure to
// deliver as the last value, nil when none.
func pump[T any](ctx context.Context, s SDKStream[T], c *PumpConfig[T], ch chan<- any) error {
	var held []any // content-free events before the first with content
	live := false  // an event with content was read: deliver everything
	tool := false  // a tool call was delivered, and said
	inference := genai.From(ctx)
	for s.Next() {
		if inference != nil {
			inference.Chunk(ctx)
		}
		ev := s.Current()
		if c.Observe != nil {
			c.Observe(ev)
		}
		if !tool && c.ToolCall != nil && c.ToolCall(ev) {
			tool = true
			route.MarkToolCall(ctx) // before the consumer can have it
		}
		if c.Fail != nil {
			if err := c.Fail(ev); err != nil {
				return err
			}
		}
		if !live && !c.Content(ev) {
			held = append(held, ev)
			continue
		}
		live = true
		for _, h := range held {
			if !streams.Send(ctx, ch, h) {
				return nil
			}
		}
		held = nil
		if !streams.Send(ctx, ch, ev) {
			return nil
		}
	}
	if err := s.Err(); err != nil && ctx.Err() == nil {
		return c.Adapt(err)
	}
	return nil
}

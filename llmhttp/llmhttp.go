// Package llmhttp is for writing an LLM provider adapter: a Runnable over
// an HTTP SDK (the modules under providers/ are built on it). It holds the
// error an adapter hands to the retry layer (APIError, with a Verdict when
// the provider decided retryability), the server's retry hints read from
// response headers (RetryAfter, ShouldRetry), and the pump from an SDK
// stream iterator to a core stream channel (Pump). It depends on no SDK
// and on no other package of steadfast: the retry layer reads its errors
// through the methods they implement (StatusCode, RetryAfter, Retryable,
// ErrorType).
//
// Its subpackage llmhttptest is a scripted in-memory server to test such
// an adapter through its real SDK client.
package llmhttp

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// APIError is a provider's error as the retry layer reads it: a status
// code, the server's Retry-After hint and the provider's error code. It
// wraps the SDK's error, which errors.As still finds.
type APIError struct {
	Status int           // the HTTP status; 0 for an error event inside a stream
	Code   string        // the provider's error code or type, "" if none
	After  time.Duration // the server's hint; 0 if none
	Err    error         // the SDK's error
}

func (e *APIError) Error() string { return e.Err.Error() }
func (e *APIError) Unwrap() error { return e.Err }

// StatusCode returns the HTTP status (retry rule 5).
func (e *APIError) StatusCode() int { return e.Status }

// RetryAfter returns the server's hint.
func (e *APIError) RetryAfter() time.Duration { return e.After }

// ErrorType returns the provider's code, for the error.type attribute; ""
// lets the retry layer fall back to the status code.
func (e *APIError) ErrorType() string { return e.Code }

// Verdict is an APIError whose retryability the provider decided: an
// x-should-retry header, or an error code that no retry fixes (an exhausted
// quota, a prompt longer than the context window). Other errors carry no
// verdict and are left to the retry layer's status rules.
type Verdict struct {
	*APIError
	Retry bool
}

// Retryable reports the provider's verdict (retry rule 2).
func (v *Verdict) Retryable() bool { return v.Retry }

// Unwrap returns the APIError.
func (v *Verdict) Unwrap() error { return v.APIError }

// ShouldRetry reads the x-should-retry header: its verdict, and whether
// the server sent one.
func ShouldRetry(h http.Header) (retry, ok bool) {
	switch h.Get("x-should-retry") {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// RetryAfter reads the server's hint from retry-after-ms (milliseconds),
// else Retry-After (seconds, or an HTTP date). Malformed, negative or
// non-finite values are no hint.
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
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

// Pump forwards the text of each event of s, as a string chunk, to the
// returned channel, skipping events without text; then, if s failed, its
// error passed through adapt as the last value. The goroutine it starts
// ends when s ends or ctx is done, and closes s and the channel.
func Pump[T any](ctx context.Context, s SDKStream[T], text func(T) string, adapt func(error) error) <-chan any {
	ch := make(chan any)
	go func() {
		defer close(ch)
		defer s.Close()
		for s.Next() {
			t := text(s.Current())
			if t == "" {
				continue
			}
			select {
			case ch <- t:
			case <-ctx.Done():
				return
			}
		}
		if err := s.Err(); err != nil && ctx.Err() == nil {
			select {
			case ch <- adapt(err):
			case <-ctx.Done():
			}
		}
	}()
	return ch
}

package errproto

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

type statusErr int

func (e statusErr) Error() string   { return "status" }
func (e statusErr) StatusCode() int { return int(e) }

type httpStatusErr int

func (e httpStatusErr) Error() string       { return "http status" }
func (e httpStatusErr) HTTPStatusCode() int { return int(e) }

type typedErr string

func (e typedErr) Error() string     { return "typed" }
func (e typedErr) ErrorType() string { return string(e) }

type hintErr time.Duration

func (e hintErr) Error() string             { return "hint" }
func (e hintErr) RetryAfter() time.Duration { return time.Duration(e) }

type verdictErr bool

func (e verdictErr) Error() string   { return "verdict" }
func (e verdictErr) Retryable() bool { return bool(e) }

func TestType(t *testing.T) {
	opErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("refused")}
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, "_OTHER"},
		{typedErr("context_length_exceeded"), "context_length_exceeded"},
		{fmt.Errorf("wrapped: %w", errors.Join(statusErr(429), typedErr("rate_limit"))), "rate_limit"},
		{typedErr(""), "errproto.typedErr"}, // an empty ErrorType says nothing

		{fmt.Errorf("wrapped: %w", statusErr(503)), "503"},
		{httpStatusErr(502), "502"},
		{fmt.Errorf("call: %w", context.Canceled), "canceled"},
		{context.DeadlineExceeded, "deadline_exceeded"},
		{timeout, "timeout"},
		{fmt.Errorf("post: %w", opErr), "*errors.errorString"},
		{opErr, "*errors.errorString"},
		{errors.New("plain"), "*errors.errorString"},
	} {
		if got := Type(tc.err); got != tc.want {
			t.Errorf("Type(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestStatusPrefersStatusCode(t *testing.T) {
	if code, ok := Status(errors.Join(httpStatusErr(500), statusErr(404))); !ok || code != 404 {
		t.Errorf("Status() = %d, %v, want 404 from StatusCode", code, ok)
	}
	if _, ok := Status(errors.New("x")); ok {
		t.Error("Status(plain error) ok = true, want false")
	}
}

func TestRetryAfterIgnoresNonPositive(t *testing.T) {
	if d, ok := RetryAfter(fmt.Errorf("w: %w", hintErr(time.Second))); !ok || d != time.Second {
		t.Errorf("RetryAfter() = %v, %v, want 1s", d, ok)
	}
	for _, h := range []hintErr{0, hintErr(-time.Second)} {
		if _, ok := RetryAfter(h); ok {
			t.Errorf("RetryAfter(%v) ok = true, want no hint", time.Duration(h))
		}
	}
}

func TestRetryable(t *testing.T) {
	if v, ok := Retryable(fmt.Errorf("w: %w", verdictErr(false))); !ok || v {
		t.Errorf("Retryable(no) = %v, %v, want false, true", v, ok)
	}
	if _, ok := Retryable(statusErr(500)); ok {
		t.Error("Retryable(no verdict) ok = true, want false")
	}
}

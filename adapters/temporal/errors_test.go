package temporal_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/steadfast-go/steadfast/adapters/temporal"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// apiError is a provider's failure as the providers/ adapters make it.
func apiError(status int, code string, after time.Duration) *llmhttp.APIError {
	return &llmhttp.APIError{Status: status, Code: code, After: after, Err: fmt.Errorf("provider: %d %s", status, code)}
}

// verdict is a failure the provider itself says no retry fixes.
func verdict(status int, code string) error {
	a := apiError(status, code, 0)
	a.Permanent = true
	return llmhttp.Classify(a, nil, "")
}

func TestToApplicationError(t *testing.T) {
	for _, tc := range []struct {
		name         string
		err          error
		typ          string
		nonRetryable bool
		delay        time.Duration
	}{
		{"a context-length 400, stopped by the retry layer", &retry.Error{Outcome: retry.OutcomeNotRetryable, Attempts: 1, Err: verdict(400, "context_length_exceeded")},
			"context_length_exceeded", true, 0},
		{"a quota 429, wrapped by user code", fmt.Errorf("summarise: %w", &retry.Error{Outcome: retry.OutcomeNotRetryable, Attempts: 1, Err: verdict(429, "insufficient_quota")}),
			"insufficient_quota", true, 0},
		{"503s, every attempt made", &retry.Error{Outcome: retry.OutcomeExhausted, Attempts: 4, Err: apiError(503, "", 0)},
			"503", true, 0},
		{"a wait handed off", &retry.Error{Outcome: retry.OutcomeHandedOff, Attempts: 2, Wait: 45 * time.Second, Err: apiError(503, "", 0)},
			"503", false, 45 * time.Second},
		{"a hint longer than MaxRetryAfter", &retry.Error{Outcome: retry.OutcomeRetryAfterTooLong, Attempts: 1, Err: apiError(429, "rate_limit_exceeded", 90*time.Second)},
			"rate_limit_exceeded", false, 90 * time.Second},
		{"the budget refused", &retry.Error{Outcome: retry.OutcomeBudgetExhausted, Attempts: 1, Err: apiError(503, "", 0)},
			"503", false, 0},
		{"a 429 with a hint, not through the retry layer", apiError(429, "", 3*time.Second), "429", false, 3 * time.Second},
		{"a 401, not through the retry layer", apiError(401, "invalid_api_key", 0), "invalid_api_key", true, 0},
		{"a permanent error of the user's", retry.Permanent(errors.New("bad input")), "*errors.errorString", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := temporal.ToApplicationError(tc.err)
			var app *sdktemporal.ApplicationError
			if !errors.As(got, &app) {
				t.Fatalf("ToApplicationError() = %T %v, want a *temporal.ApplicationError", got, got)
			}
			if app.Type() != tc.typ || app.NonRetryable() != tc.nonRetryable || app.NextRetryDelay() != tc.delay {
				t.Errorf("type %q, NonRetryable %v, NextRetryDelay %v; want %q, %v, %v",
					app.Type(), app.NonRetryable(), app.NextRetryDelay(), tc.typ, tc.nonRetryable, tc.delay)
			}
			if !errors.Is(got, tc.err) && !errors.Is(got, errors.Unwrap(tc.err)) {
				var re *retry.Error
				if !errors.As(got, &re) {
					t.Errorf("the failure is not reachable from %v", got)
				}
			}
		})
	}
}

func TestToApplicationErrorKeepsWhatIsTemporals(t *testing.T) {
	if err := temporal.ToApplicationError(nil); err != nil {
		t.Errorf("ToApplicationError(nil) = %v, want nil", err)
	}
	app := sdktemporal.NewApplicationError("mine", "my_type")
	if got := temporal.ToApplicationError(fmt.Errorf("wrapped: %w", app)); !errors.Is(got, app) {
		t.Errorf("ToApplicationError(an ApplicationError) = %v, want it kept", got)
	}
	for _, err := range []error{
		context.Canceled,
		fmt.Errorf("tool: %w", context.Canceled),
		&retry.Error{Outcome: retry.OutcomeCanceled, Attempts: 2, Err: apiError(503, "", 0), ContextErr: context.Canceled},
	} {
		var canceled *sdktemporal.CanceledError
		if got := temporal.ToApplicationError(err); !errors.As(got, &canceled) {
			t.Errorf("ToApplicationError(%v) = %T, want a *temporal.CanceledError: a cancellation stays one", err, got)
		}
	}
}

// Temporal's failure converter follows errors.Unwrap, which does not see a
// *retry.Error's Unwrap() []error: through ToApplicationError, the
// provider's failure still reaches the workflow as the cause.
func TestToApplicationErrorCauseCrossesTheWire(t *testing.T) {
	err := temporal.ToApplicationError(&retry.Error{Outcome: retry.OutcomeExhausted, Attempts: 4, Err: apiError(503, "overloaded_error", 0)})
	fc := sdktemporal.GetDefaultFailureConverter()
	back := fc.FailureToError(fc.ErrorToFailure(err))
	var app *sdktemporal.ApplicationError
	if !errors.As(back, &app) || app.Type() != "overloaded_error" || !app.NonRetryable() {
		t.Fatalf("across the wire: %v, want a NonRetryable ApplicationError of type overloaded_error", back)
	}
	found := false
	for e := errors.Unwrap(back); e != nil; e = errors.Unwrap(e) {
		if msg := e.Error(); msg == apiError(503, "overloaded_error", 0).Error() {
			found = true
		}
	}
	if !found {
		t.Errorf("across the wire the cause chain of %v lost the provider's failure", back)
	}
}

// The outcome and the attempts cross the wire in the details, for the
// workflow to read.
func TestFailureDetailsAcrossTheWire(t *testing.T) {
	err := temporal.ToApplicationError(&retry.Error{Outcome: retry.OutcomeExhausted, Attempts: 3, Err: apiError(429, "", 0)})
	fc := sdktemporal.GetDefaultFailureConverter()
	outcome, attempts, ok := temporal.FailureDetails(fc.FailureToError(fc.ErrorToFailure(err)))
	if !ok || outcome != retry.OutcomeExhausted || attempts != 3 {
		t.Errorf("FailureDetails() = %q, %d, %v; want exhausted, 3, true", outcome, attempts, ok)
	}
	if _, _, ok := temporal.FailureDetails(temporal.ToApplicationError(errors.New("plain"))); ok {
		t.Error("FailureDetails of a failure that did not come through the retry layer: ok")
	}
}

package temporal

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/steadfast-go/steadfast/retry"
)

// ToApplicationError returns err as Temporal should see it, nil for nil:
//
//   - a *temporal.ApplicationError or *temporal.CanceledError is returned
//     as it is;
//   - a cancellation (errors.Is context.Canceled, however it was wrapped,
//     or a *retry.Error with outcome canceled) becomes a
//     *temporal.CanceledError with err's message as its details: a
//     caller's cancellation stays one, and Temporal reports the activity
//     canceled;
//   - any other failure becomes a *temporal.ApplicationError whose type is
//     its error.type (retry.ErrorType of the last attempt's error: an API
//     code such as "insufficient_quota" or "context_length_exceeded", else
//     the status, "503"), so that RetryPolicy.NonRetryableErrorTypes can
//     name it, and whose cause is the failure (errors.As finds the
//     *retry.Error and the provider's error through it, and Temporal's
//     failure converter, which follows errors.Unwrap, carries the last
//     attempt's error across the wire).
//
// It is NonRetryable when no retry can help: the retry layer stopped on a
// failure it classified permanent (a 400, an exhausted quota) or made
// every attempt it may; or, for an error that did not come through the
// retry layer, when retry.IsRetryable says so. The server's hint (a
// Retry-After), or the wait a handed-off call did not sleep, becomes its
// NextRetryDelay. For a *retry.Error, its details are the outcome and
// the attempts made (see FailureDetails): a workflow tells a call whose
// attempts ran out (a dead letter) from one that can never succeed.
func ToApplicationError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*temporal.ApplicationError](err); ok {
		return err
	}
	if _, ok := errors.AsType[*temporal.CanceledError](err); ok {
		return err
	}
	var (
		permanent bool
		delay     time.Duration
		last      = err
		cause     = err
	)
	if re, ok := errors.AsType[*retry.Error](err); ok {
		if re.Err != nil {
			last = re.Err
		}
		cause = &attemptsError{re}
		switch re.Outcome {
		case retry.OutcomeCanceled:
			return canceled(err)
		case retry.OutcomeNotRetryable, retry.OutcomeExhausted:
			permanent = true
		case retry.OutcomeHandedOff:
			delay = re.Wait
		}
	} else if errors.Is(err, context.Canceled) {
		return canceled(err)
	} else {
		permanent = !retry.IsRetryable(err)
	}
	if delay == 0 && !permanent {
		delay, _ = retry.ServerHint(last)
	}
	opts := temporal.ApplicationErrorOptions{NonRetryable: permanent, Cause: cause, NextRetryDelay: delay}
	if re, ok := errors.AsType[*retry.Error](err); ok {
		opts.Details = []any{string(re.Outcome), re.Attempts}
	}
	return temporal.NewApplicationErrorWithOptions(err.Error(), retry.ErrorType(last), opts)
}

// FailureDetails reads what ToApplicationError put in an
// ApplicationError's details, as a workflow sees the error of an
// activity: the retry layer's outcome and the attempts the call made, in
// every activity attempt. ok is false for an error that did not come
// through the retry layer.
func FailureDetails(err error) (outcome retry.Outcome, attempts int, ok bool) {
	app, found := errors.AsType[*temporal.ApplicationError](err)
	if !found || !app.HasDetails() {
		return "", 0, false
	}
	var o string
	if app.Details(&o, &attempts) != nil || o == "" {
		return "", 0, false
	}
	return retry.Outcome(o), attempts, true
}

// attemptsError is a *retry.Error as the cause of an ApplicationError.
// errors.As finds the *retry.Error through it; errors.Unwrap, which
// Temporal's failure converter follows and which does not see a
// *retry.Error's Unwrap() []error, reaches the last attempt's error.
type attemptsError struct{ re *retry.Error }

// Error returns the *retry.Error's message.
func (e *attemptsError) Error() string { return e.re.Error() }

// Unwrap returns the last attempt's error, or the context's when no
// attempt was made.
func (e *attemptsError) Unwrap() error {
	if e.re.Err != nil {
		return e.re.Err
	}
	return e.re.ContextErr
}

// As lets errors.As find the *retry.Error.
func (e *attemptsError) As(target any) bool {
	if p, ok := target.(**retry.Error); ok {
		*p = e.re
		return true
	}
	return false
}

// canceled is the cancellation err as Temporal knows one.
func canceled(err error) error { return temporal.NewCanceledError(err.Error()) }

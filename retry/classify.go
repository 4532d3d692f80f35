package retry

import (
	"context"
	"errors"

	"github.com/steadfast-go/steadfast/internal/errproto"
)

// retryable applies classification rules 2 to 8 (the package doc lists
// them) in order; rule 1 (the caller's context is done) is plan's, as it
// ends the call with its own outcome.
func retryable(cfg *RetryConfig, err error) bool {
	// Rule 2: the error's own verdict (Permanent, adapters, breakers).
	if v, ok := errproto.Retryable(err); ok {
		return v
	}
	// Rule 3: the caller's classifier.
	if cfg.RetryIf != nil {
		return cfg.RetryIf(err)
	}
	// Rule 4: an allow-list.
	if len(cfg.RetryableErrors) > 0 {
		for _, target := range cfg.RetryableErrors {
			if errors.Is(err, target) {
				return true
			}
		}
		return false
	}
	// Rule 5: HTTP-like status codes.
	if code, ok := errproto.Status(err); ok {
		if v, decided := retryableStatus(code); decided {
			return v
		}
	}
	// Rules 6 to 8: the attempt's own timeout, network timeouts and broken
	// connections, and anything else are all presumed transient. They are
	// listed apart in the docs because RetryableErrors (rule 4) and
	// RetryIf (rule 3) come before them.
	return true
}

// retryableStatus reports the verdict for an HTTP status code, and whether
// the code decides at all (only 4xx and 5xx do).
func retryableStatus(code int) (retry, decided bool) {
	switch {
	case code == 408, code == 409, code == 425, code == 429:
		return true, true
	case code >= 500 && code <= 599:
		return true, true
	case code >= 400 && code <= 499:
		return false, true
	}
	return false, false
}

// ctxOutcome names how a done context ended a call.
func ctxOutcome(err error) Outcome {
	if errors.Is(err, context.DeadlineExceeded) {
		return OutcomeDeadline
	}
	return OutcomeCanceled
}

package retry

import "errors"

// attemptTimeoutError is an attempt's error marked as its own timeout
// (PerAttemptTimeout, FirstChunkTimeout): it matches ErrAttemptTimeout and
// the error the attempt failed with.
type attemptTimeoutError struct{ err error }

func (e *attemptTimeoutError) Error() string { return ErrAttemptTimeout.Error() + ": " + e.err.Error() }
func (e *attemptTimeoutError) Unwrap() []error {
	return []error{ErrAttemptTimeout, e.err}
}

// timedOutError marks err as its attempt's own timeout, unless it already
// matches ErrAttemptTimeout.
func timedOutError(err error) error {
	if errors.Is(err, ErrAttemptTimeout) {
		return err
	}
	return &attemptTimeoutError{err: err}
}

package retry

import (
	"errors"
	"fmt"
	"time"
)

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

// stallError is the failure of a stream that yielded no value within
// ChunkTimeout after its first chunk: it matches ErrStreamStalled.
type stallError struct{ timeout time.Duration }

func (e *stallError) Error() string {
	return fmt.Sprintf("%v: no chunk within ChunkTimeout %v", ErrStreamStalled, e.timeout)
}
func (e *stallError) Unwrap() error { return ErrStreamStalled }

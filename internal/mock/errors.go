package mock

import (
	"fmt"
	"time"
)

// HTTPError is an error with a status code and an optional Retry-After
// hint, shaped like the errors of HTTP API clients.
type HTTPError struct {
	Code  int
	After time.Duration
	Msg   string
}

func (e *HTTPError) Error() string {
	msg := e.Msg
	if msg == "" {
		msg = "status"
	}
	return fmt.Sprintf("%s (%d)", msg, e.Code)
}

// StatusCode returns the HTTP status code.
func (e *HTTPError) StatusCode() int { return e.Code }

// RetryAfter returns the server's hint, 0 when it gave none.
func (e *HTTPError) RetryAfter() time.Duration { return e.After }

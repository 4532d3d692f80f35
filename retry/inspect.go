package retry

import (
	"time"

	"github.com/steadfast-go/steadfast/internal/errproto"
)

// ErrorType returns err's error.type, as the retry layer's telemetry
// records it: the error's own ErrorType() (a provider's API code, such as
// "insufficient_quota"), else its status code ("429"), else canceled,
// deadline_exceeded or timeout, else its Go type. An integration that
// hands failures to another system (a workflow engine's error types, a
// dead letter) names them the same way.
func ErrorType(err error) string { return errproto.Type(err) }

// IsRetryable reports whether the default rules (DefaultRetryConfig: see
// "What is retried" in the package doc) would retry err: false for an
// error that says so itself (Permanent, a provider's verdict) and for a
// 4xx status but 408, 409, 425 and 429; true otherwise.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	return retryable(&defaultConfig, err)
}

var defaultConfig = DefaultRetryConfig()

// ServerHint returns the wait the server asked for before a retry (a
// Retry-After header, or a hint in the body), and whether there was one.
func ServerHint(err error) (time.Duration, bool) { return errproto.RetryAfter(err) }

package retry

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// RetryConfig is the retry policy of one operation: plain data that can be
// written in Go or loaded from JSON (durations as Go duration strings such as
// "500ms"). The zero value makes one attempt and never retries.
type RetryConfig struct {
	// MaxRetries is the number of retries after the first attempt; 0 means
	// no retry.
	MaxRetries int
	// InitialBackoff is the delay before the first retry.
	InitialBackoff time.Duration
	// MaxBackoff caps every computed delay, after jitter. A server's
	// Retry-After hint may exceed it, up to MaxRetryAfter.
	MaxBackoff time.Duration
	// BackoffFactor is the growth of the delay per retry; 0 means 2.
	BackoffFactor float64
	// Jitter, in [0, 1], subtracts a random share of each delay:
	// delay = d × (1 − Jitter × U[0,1)). 1 is full jitter.
	Jitter float64
	// RetryableErrors, when non-empty, restricts retries to errors that
	// match one of them with errors.Is. Not written to JSON.
	RetryableErrors []error
	// PerAttemptTimeout bounds each attempt; 0 means none. An attempt that
	// runs out of it is retryable, and its error matches ErrAttemptTimeout.
	PerAttemptTimeout time.Duration
	// MaxRetryAfter is the longest server Retry-After hint honoured; 0 means
	// 60s. A longer hint ends retrying at once.
	MaxRetryAfter time.Duration
	// FirstChunkTimeout bounds, for Stream, the wait from the attempt's
	// request to its first value, creation (a provider's headers)
	// included; 0 means none. An attempt that yields nothing within it is
	// abandoned and retried; inside a fallback with another candidate
	// after it, it ends the call (OutcomeSilentTimeout).
	FirstChunkTimeout time.Duration
	// ChunkTimeout bounds, for Stream, the wait for each value after the
	// first; 0 means none. A stream that stalls longer is cancelled with
	// the cause ErrStreamStalled, so its producer stops, and the consumer
	// gets the stall (an error matching ErrStreamStalled) as the last
	// value, or, with ResumeStreams, the stream is resumed.
	ChunkTimeout time.Duration
	// ResumeStreams, for a Stream whose inner Runnable is a core.Resumer,
	// resumes the stream after a retryable failure after its first chunk
	// (an error value, a stall, a dropped connection): after the usual
	// backoff, with the budget asked, within MaxRetries, the inner
	// Runnable's Resume continues after the last chunk delivered. Without
	// it, or without a Resumer, nothing after the first chunk is retried.
	ResumeStreams bool
	// RestartStreams, for a Stream whose caller passed core.WithResets,
	// starts a stream that broke after its first chunk (an error value, a
	// stall, a malformed event) and cannot resume again from its input
	// on the same Runnable: a retry, with its backoff, budget and
	// MaxRetries, whose attempt span has retry.restarted = true. The
	// consumer is sent a core.Reset before the new stream's first chunk;
	// the tokens of the chunks it voids count as discarded. A stream that
	// delivered a tool call (which its consumer may have run) is
	// restarted only when the inner Runnable says it is idempotent
	// (implements core.Idempotency and reports true). Without
	// core.WithResets nothing changes: the failure is the last value.
	RestartStreams bool
	// RetryNonIdempotent opts in to retrying a Runnable whose Idempotent()
	// reports false. Such a Runnable should deduplicate by the InvocationID
	// of AttemptFromContext.
	RetryNonIdempotent bool
	// Nested says what a call made inside another RetryRunnable's attempt
	// does (a tool chain retried by an agent loop that is itself retried;
	// a model behind a framework's retrying workflow), where each layer's
	// retries would multiply the others': "once", the default ("" means
	// it), makes one attempt and leaves retrying to the outer layer,
	// which classifies the failure as its own (a *Error unwraps to the
	// attempt's error); "retry" retries here as well, as before: up to
	// MaxRetries + 1 attempts for each of the outer layer's. A nested call
	// neither resumes nor restarts a broken stream (the outer layer
	// does); a repair (Repair), which sends another input, is still made.
	// A pool's move to another deployment and a fallback's to another
	// candidate are not retries: a call below only those is not nested.
	// The call span's retry.nested attribute is the depth (1 inside one
	// layer) where it is above 0. AttemptFromContext reports the
	// MaxAttempts the call has: 1 for a nested "once".
	Nested string
	// MaxRetriesByClass, when set, bounds the retries a call makes after
	// failures of a class (ClassOf), within MaxRetries: {rate_limit: 5,
	// timeout: 1} retries rate limits five times and timeouts once. A
	// class it leaves out is bounded by MaxRetries alone. In a Batch each
	// item counts its own. A call that meets a class's bound ends
	// exhausted, and its *Error's Class names the class.
	MaxRetriesByClass map[Class]int
	// RetryIf, when set, decides which errors are retried, after an error's
	// own Retryable() verdict and before every other rule. Not written to JSON.
	RetryIf func(error) bool
	// CheckOutput, when set, checks the output of every attempt that
	// returned no error, given the input that attempt was sent. A non-nil
	// error makes the attempt a failure: it is wrapped in an error
	// (error.type invalid_output, unless the error names its own) and
	// classified by the usual rules, so Permanent stops at once. A rejected
	// output neither asks nor charges the Budget: a bad answer is not
	// overload. Invoke and each Batch item are checked; a Stream's chunks
	// are delivered as they come and are not. Not written to JSON.
	CheckOutput func(ctx context.Context, input, output any) error
	// NextInput, when set, gives the input of the attempt after a failed
	// one, from that attempt's input and error: to tell a model what was
	// wrong with its answer, or to raise a limit. Rewrites build on each
	// other. It must return a new value rather than modify input, so that
	// the caller's input is never modified. Invoke and each Batch item
	// only. Not written to JSON.
	NextInput func(ctx context.Context, input any, err error) any
	// Repair, when set, is offered each failure that the rules call
	// permanent (one that is not retryable in itself: a context window
	// overflow, a request larger than a token limit), with the input that
	// attempt was sent. When it returns a changed input and true, the call
	// is tried again with it at once: no backoff, no budget token, and no
	// retry spent. false leaves the failure as it is. It must return a new
	// value rather than modify input; a nil input with true is a
	// configuration error, and a Repair that panics ends the call with that
	// panic as its failure. Invoke, each Stream creation (never after the
	// first chunk) and each Batch item, at most MaxRepairs times each.
	// Not written to JSON.
	Repair func(ctx context.Context, input any, err error) (any, bool)
	// MaxRepairs is the most repairs of a call, or of a Batch item; 0
	// means 1 when Repair is set.
	MaxRepairs int
	// RepairOutput, when set, is offered each output CheckOutput rejects,
	// with the input it answered and the check's error, before another
	// request is paid for: it may return a fixed output (a JSON answer in
	// a code fence or with a trailing comma, a tool name in the wrong
	// case; package repair has both), which is delivered only if it passes
	// CheckOutput, at no cost: no tokens, no backoff, no retry spent
	// (event retry.output_repair, repair.rung "local"). false, or a fix
	// the check rejects too, leaves the rejection to the usual rules: the
	// re-ask, with NextInput's input (event retry.output_repair,
	// repair.rung "reask"). It must not modify output. Invoke and each
	// Batch item, at most MaxOutputRepairs times an attempt. Not written
	// to JSON.
	RepairOutput func(ctx context.Context, input, output any, err error) (any, bool)
	// MaxOutputRepairs is the most fixes RepairOutput is asked for in a
	// row on one attempt's output, each building on the last; 0 means 1
	// when RepairOutput is set.
	MaxOutputRepairs int
	// MaxRetryTokens, when positive, bounds the tokens a call may throw
	// away: once its attempts whose output never reached the caller (a
	// failure after partial output, an answer CheckOutput rejected, a
	// hedge's losing request, a fallback candidate that failed) were billed
	// that many tokens, input and output, it makes no further attempt and
	// ends with OutcomeRetryTokensExhausted. Tokens are those the
	// providers' adapters report (llmhttp.Response.Record); an attempt
	// whose usage is unknown counts 0. In a Batch each item counts its
	// own. 0 means no bound.
	MaxRetryTokens int
}

// Seed values of DefaultRetryConfig and of zero fields.
const (
	defaultBackoffFactor = 2
	defaultMaxRetryAfter = 60 * time.Second
	// maxMaxRetries keeps MaxRetries + 1, the most attempts, representable
	// in AttemptInfo's int32 fields on every platform.
	maxMaxRetries = math.MaxInt32 - 1
)

// DefaultRetryConfig returns the recommended starting policy: 3 retries,
// 1s initial backoff doubling up to 30s, 10% jitter.
func DefaultRetryConfig() RetryConfig {
	return RetryConfig{
		MaxRetries:     3,
		InitialBackoff: time.Second,
		MaxBackoff:     30 * time.Second,
		BackoffFactor:  defaultBackoffFactor,
		Jitter:         0.1,
	}
}

// configError reports an invalid RetryConfig field. Field is the Go field
// name (or, for an unknown JSON field, the name as written); the message
// also gives the JSON name used in policy files.
type configError struct {
	Operation string // the policy's operation, when known
	Field     string
	Reason    string
}

func (e *configError) Error() string {
	name := e.Field
	if j := jsonName(e.Field); j != "" {
		name = fmt.Sprintf("%s (%q)", e.Field, j)
	}
	if e.Operation != "" {
		return fmt.Sprintf("retry: policy %q: %s %s", e.Operation, name, e.Reason)
	}
	return fmt.Sprintf("retry: RetryConfig.%s %s", name, e.Reason)
}

// Validate reports the first invalid field: a negative count or duration,
// a NaN or infinite float, Jitter outside [0, 1], BackoffFactor below 1
// (other than 0, which means 2), or MaxBackoff below InitialBackoff.
func (c RetryConfig) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &configError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case c.MaxRetries < 0:
		return bad("MaxRetries", "is %d, must not be negative", c.MaxRetries)
	case c.MaxRetries > maxMaxRetries:
		return bad("MaxRetries", "is %d, must be at most %d", c.MaxRetries, maxMaxRetries)
	case c.MaxRetryTokens < 0:
		return bad("MaxRetryTokens", "is %d, must not be negative", c.MaxRetryTokens)
	case c.MaxOutputRepairs < 0:
		return bad("MaxOutputRepairs", "is %d, must not be negative", c.MaxOutputRepairs)
	case c.MaxRepairs < 0:
		return bad("MaxRepairs", "is %d, must not be negative", c.MaxRepairs)
	case c.MaxRepairs > maxMaxRetries-c.MaxRetries:
		return bad("MaxRepairs", "is %d, must be at most %d with MaxRetries %d", c.MaxRepairs, maxMaxRetries-c.MaxRetries, c.MaxRetries)
	case c.InitialBackoff < 0:
		return bad("InitialBackoff", "is %v, must not be negative", c.InitialBackoff)
	case c.MaxBackoff < 0:
		return bad("MaxBackoff", "is %v, must not be negative", c.MaxBackoff)
	case math.IsNaN(c.BackoffFactor) || math.IsInf(c.BackoffFactor, 0):
		return bad("BackoffFactor", "is %v, must be a finite number", c.BackoffFactor)
	case c.BackoffFactor != 0 && c.BackoffFactor < 1:
		return bad("BackoffFactor", "is %v, must be at least 1 (or 0 for the default 2)", c.BackoffFactor)
	case math.IsNaN(c.Jitter) || c.Jitter < 0 || c.Jitter > 1:
		return bad("Jitter", "is %v, must be within [0, 1]", c.Jitter)
	case c.MaxBackoff < c.InitialBackoff:
		return bad("MaxBackoff", "is %v, must be at least InitialBackoff (%v)", c.MaxBackoff, c.InitialBackoff)
	case c.PerAttemptTimeout < 0:
		return bad("PerAttemptTimeout", "is %v, must not be negative", c.PerAttemptTimeout)
	case c.MaxRetryAfter < 0:
		return bad("MaxRetryAfter", "is %v, must not be negative", c.MaxRetryAfter)
	case c.FirstChunkTimeout < 0:
		return bad("FirstChunkTimeout", "is %v, must not be negative", c.FirstChunkTimeout)
	case c.ChunkTimeout < 0:
		return bad("ChunkTimeout", "is %v, must not be negative", c.ChunkTimeout)
	case c.Nested != "" && c.Nested != nestedOnce && c.Nested != nestedRetry:
		return bad("Nested", "is %q, must be %q (the default) or %q", c.Nested, nestedOnce, nestedRetry)
	}
	for _, class := range slices.Sorted(maps.Keys(c.MaxRetriesByClass)) {
		switch n := c.MaxRetriesByClass[class]; {
		case class.index() < 0:
			return bad("MaxRetriesByClass", "has an unknown class %q: want one of %v", class, classes)
		case n < 0:
			return bad("MaxRetriesByClass", "has %d for %s, must not be negative", n, class)
		}
	}
	return nil
}

// The values of RetryConfig.Nested.
const (
	nestedOnce  = "once"
	nestedRetry = "retry"
)

func (c *RetryConfig) maxRetryAfter() time.Duration {
	if c.MaxRetryAfter == 0 {
		return defaultMaxRetryAfter
	}
	return c.MaxRetryAfter
}

// maxOutputRepairs is the most fixes asked of RepairOutput for one
// attempt's output: none without RepairOutput, and MaxOutputRepairs' 0
// is 1.
func (c *RetryConfig) maxOutputRepairs() int {
	if c.RepairOutput == nil {
		return 0
	}
	return max(c.MaxOutputRepairs, 1)
}

// maxRepairs is the most repairs of a call: none without Repair, and
// MaxRepairs' 0 is 1.
func (c *RetryConfig) maxRepairs() int {
	if c.Repair == nil {
		return 0
	}
	return max(c.MaxRepairs, 1)
}

// attempts is the most attempts a call under c makes: one when it is
// nested in another layer's attempt and leaves the retrying to it
// (Nested "once", the default).
func (c *RetryConfig) attempts(nested bool) int {
	if nested && c.Nested != nestedRetry {
		return 1
	}
	return c.MaxRetries + 1
}

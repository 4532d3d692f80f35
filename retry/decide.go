package retry

import (
	"time"

	"github.com/steadfast-go/steadfast/internal/errproto"
)

// verdict is what the rules say of one failed attempt: whether it may go
// again and, if not, the outcome that ends it.
type verdict struct {
	outcome   Outcome       // non-empty: it may not go again
	limit     Class         // the class whose MaxRetriesByClass bound ended it, if one did
	retryable bool          // the classification rules call it retryable
	class     Class         // its class, when a MaxRetriesByClass bound counts it
	hint      time.Duration // the server's hint, when it may go again
}

// decide applies the rules to attempt n's failure err, for a call that
// makes at most maxAttempts attempts and has spent the retries in spent
// (nil when no per-class bound counts them) and discarded tokens thrown
// away; idempotent is what the inner Runnable says of itself. It is the rules and nothing else: it reports
// nothing and counts nothing. The caller's context, rule 1, is the
// caller's to look at before it asks.
func decide(cfg *RetryConfig, idempotent bool, n, maxAttempts int, err error, spent *classTally, discarded int64) verdict {
	switch err.(type) {
	case *silentError:
		return verdict{outcome: OutcomeSilentTimeout, retryable: true}
	case *routeError:
		return verdict{outcome: OutcomeExhausted, retryable: true}
	}
	if (!idempotent && !cfg.RetryNonIdempotent) || !retryable(cfg, err) {
		return verdict{outcome: OutcomeNotRetryable}
	}
	v := verdict{retryable: true}
	if n >= maxAttempts {
		v.outcome = OutcomeExhausted
		return v
	}
	if bounds := cfg.MaxRetriesByClass; len(bounds) > 0 && spent != nil {
		v.class = ClassOf(err)
		if bound, ok := bounds[v.class]; ok && spent[v.class.index()] >= bound {
			v.outcome, v.limit = OutcomeExhausted, v.class
			return v
		}
	}
	if cfg.MaxRetryTokens > 0 && discarded >= int64(cfg.MaxRetryTokens) {
		v.outcome = OutcomeRetryTokensExhausted
		return v
	}
	if hint, ok := errproto.RetryAfter(err); ok {
		if hint > cfg.maxRetryAfter() {
			v.outcome = OutcomeRetryAfterTooLong
			return v
		}
		v.hint = hint
	}
	return v
}

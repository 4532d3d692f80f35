package retry

import (
	"errors"
	"testing"
	"time"
)

type hintErr struct {
	status int
	after  time.Duration
}

func (e hintErr) Error() string             { return "hinted" }
func (e hintErr) StatusCode() int           { return e.status }
func (e hintErr) RetryAfter() time.Duration { return e.after }

// decide is the rules and nothing else: the same inputs give the same
// verdict, and it spends nothing of what it is given.
func TestDecideIsTheRules(t *testing.T) {
	cfg := &RetryConfig{MaxRetries: 3, MaxRetryAfter: time.Minute,
		MaxRetriesByClass: map[Class]int{ClassRateLimit: 1}}
	rateLimited := hintErr{status: 429, after: 2 * time.Second}
	var spent, spentOne classTally
	spentOne[ClassRateLimit.index()] = 1
	for name, tc := range map[string]struct {
		idempotent bool
		n          int
		err        error
		spent      *classTally
		want       verdict
	}{
		"a retryable failure goes again with its hint": {true, 1, rateLimited, &spent,
			verdict{retryable: true, class: ClassRateLimit, hint: 2 * time.Second}},
		"a permanent status stops":                 {true, 1, hintErr{status: 400}, &spent, verdict{outcome: OutcomeNotRetryable}},
		"a non-idempotent Runnable is not retried": {false, 1, rateLimited, &spent, verdict{outcome: OutcomeNotRetryable}},
		"the last attempt is exhausted": {true, 4, rateLimited, &spent,
			verdict{outcome: OutcomeExhausted, retryable: true}},
		"a class past its bound is exhausted, naming it": {true, 2, rateLimited, &spentOne,
			verdict{outcome: OutcomeExhausted, limit: ClassRateLimit, retryable: true, class: ClassRateLimit}},
		"a hint past MaxRetryAfter is too long": {true, 1, hintErr{status: 503, after: time.Hour}, nil,
			verdict{outcome: OutcomeRetryAfterTooLong, retryable: true}},
		"Permanent stops": {true, 1, Permanent(errors.New("no")), &spent, verdict{outcome: OutcomeNotRetryable}},
	} {
		before := *cfg
		var spentBefore classTally
		if tc.spent != nil {
			spentBefore = *tc.spent
		}
		got := decide(cfg, tc.idempotent, tc.n, 4, tc.err, tc.spent, 0)
		if got != tc.want {
			t.Errorf("%s: decide = %+v, want %+v", name, got, tc.want)
		}
		if tc.spent != nil && *tc.spent != spentBefore {
			t.Errorf("%s: decide changed what the call spent: %v", name, *tc.spent)
		}
		if cfg.MaxRetries != before.MaxRetries {
			t.Errorf("%s: decide changed the config", name)
		}
	}
}

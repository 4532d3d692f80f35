package main

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	steadfasttemporal "github.com/steadfast-go/steadfast/adapters/temporal"
	"github.com/steadfast-go/steadfast/retry"
)

// Outcomes of an article, as in the in-memory pipeline: every article
// that did not succeed has failed; the dead letters are the failures
// worth re-driving later.
const (
	succeeded  = "succeeded"
	failed     = "failed"
	deadLetter = "dead letter"
)

// articleResult is what an article's workflow returns.
type articleResult struct {
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

// articleWorkflow summarises an article, then takes its sentiment, each an
// activity; the first that fails ends the article, and one whose attempts
// ran out is dead-lettered. The RetryPolicy leaves the attempts to the
// retry layer (unlimited here, bounded there): a call whose attempts are
// spent, or that can never succeed, fails NonRetryable.
func articleWorkflow(ctx workflow.Context, article int) (articleResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		HeartbeatTimeout:    10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 0},
	})
	for _, kind := range []string{"summarise", "sentiment"} {
		err := workflow.ExecuteActivity(ctx, "llm", task{Article: article, Kind: kind}).Get(ctx, nil)
		if err == nil {
			continue
		}
		res := articleResult{Outcome: failed, Error: rootCause(err)}
		outcome, attempts, _ := steadfasttemporal.FailureDetails(err)
		switch outcome {
		case retry.OutcomeExhausted, retry.OutcomeBudgetExhausted, retry.OutcomeRetryAfterTooLong:
			res.Outcome = deadLetter
			how := fmt.Sprintf("%s after %d attempts", outcome, attempts)
			if outcome == retry.OutcomeExhausted {
				how = fmt.Sprintf("exhausted %d attempts", attempts)
			}
			line := fmt.Sprintf("%s — dead letter: %s", how, res.Error)
			if err := workflow.ExecuteActivity(ctx, "deadLetter", article, line).Get(ctx, nil); err != nil {
				return res, err
			}
		}
		return res, nil
	}
	return articleResult{Outcome: succeeded}, nil
}

// rootCause is the message of the innermost cause of an activity's
// failure: the provider's, which crossed the wire as an ApplicationError.
func rootCause(err error) string {
	for next := errors.Unwrap(err); next != nil; next = errors.Unwrap(err) {
		err = next
	}
	if app, ok := errors.AsType[*temporal.ApplicationError](err); ok {
		return app.Message()
	}
	return err.Error()
}

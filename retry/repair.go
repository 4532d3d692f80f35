package retry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/internal/panics"
)

// repairable reports whether a failure that ended as end is offered to
// Repair: the rules called it permanent, for what it is (not for the
// Runnable's idempotence), and repairs are left.
func (c *call) repairable(end Outcome, err error, repairs int) bool {
	return end == OutcomeNotRetryable && repairs < c.cfg.maxRepairs() && !retryable(c.cfg, err)
}

// repair offers attempt n's permanent failure err, of an attempt sent
// input, to Repair. It returns the input to try at once, or nil when
// Repair declined; fault is not nil when Repair broke the rules (a nil
// input with true) or panicked: the call ends with it.
func (c *call) repair(ctx context.Context, n int, input any, err error) (next any, fault error) {
	defer func() {
		if v := recover(); v != nil {
			next, fault = nil, fmt.Errorf("retry: Repair panicked: %w; the failure it was offered: %w", panics.Recovered(v), err)
		}
	}()
	next, ok := c.cfg.Repair(ctx, input, err)
	switch {
	case !ok:
		return nil, nil
	case next == nil:
		return nil, fmt.Errorf("%w; the failure it was offered: %w",
			&configError{Operation: c.operation, Field: "Repair", Reason: "returned a nil input with true: return the changed input, or false"}, err)
	}
	if c.recording {
		c.span.AddEvent(eventRepair, trace.WithAttributes(
			attrAttempt.Int(n), attrErrorType.String(errproto.Type(err))))
	}
	return next, nil
}

package retry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// The rungs of retry.output_repair's repair.rung: a fix of the answer in
// place, or another request that says what was wrong with it.
const (
	rungLocal = "local"
	rungReask = "reask"
)

// checked runs CheckOutput on attempt n's output and, when it rejects
// the output, offers it to RepairOutput up to MaxOutputRepairs times: a
// fixed output that passes the check is the attempt's, at no cost. It
// returns the output to deliver, or the check's rejection of the output
// the provider gave.
func (c *call) checked(ctx context.Context, n int, input, output any) (any, error) {
	rejection := c.check(ctx, input, output)
	err, answer := rejection, output
	for i := 0; err != nil && i < c.cfg.maxOutputRepairs(); i++ {
		fixed, ok := c.cfg.RepairOutput(ctx, input, answer, unwrapRejection(err))
		if !ok {
			break
		}
		if err = c.check(ctx, input, fixed); err == nil {
			if c.recording {
				c.span.AddEvent(eventOutputRepair, trace.WithAttributes(attrAttempt.Int(n), attrRung.String(rungLocal)))
			}
			return fixed, nil
		}
		answer = fixed
	}
	return output, rejection // the re-ask shows the model its own answer, not a fix of it
}

// unwrapRejection is the error CheckOutput returned, from the attempt's
// failure that wraps it.
func unwrapRejection(err error) error {
	if oe, ok := err.(*outputError); ok {
		return oe.Err
	}
	return err
}

// saidReask records, on the call span, that attempt n's rejected answer
// is asked again with the input NextInput gave.
func (c *call) saidReask(n int, err error) {
	if c.recording && rejected(err) && c.cfg.NextInput != nil {
		c.span.AddEvent(eventOutputRepair, trace.WithAttributes(attrAttempt.Int(n), attrRung.String(rungReask)))
	}
}

// attrRung is retry.output_repair's rung: local or reask.
var attrRung = attribute.Key("repair.rung")

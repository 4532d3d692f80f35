package retry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"

	"github.com/steadfast-go/steadfast/core"
)

// errGoexit stands for the failure of a call whose goroutine ran
// runtime.Goexit (t.FailNow in a test's inner Runnable, say) mid-call.
var errGoexit = errors.New("retry: the goroutine exited during the call (runtime.Goexit)")

// endIfUnwinding, deferred by each method on the caller's goroutine, ends
// the call's spans when the goroutine unwinds before the call ended: a
// panic of the inner Runnable, a hook, the budget or the logger, or a
// runtime.Goexit. The panic then goes on with its value unchanged, so the
// caller can recover it as if there were no retry layer.
func (c *call) endIfUnwinding(ctx context.Context) {
	if c.ended || c.handedOff {
		return
	}
	v := recover()
	var err error = errGoexit
	if v != nil {
		err = &core.PanicError{Value: v} // for telemetry; the stack is in the panic
	}
	c.failUnwound(ctx, err, false)
	if v != nil {
		panic(v)
	}
}

// failUnwound ends a call that a panic or a Goexit cut short, after its
// first chunk if committed (Stream): it ends the live attempt and the call
// span with err and records the metrics, and calls no hook and no logger,
// which may be what panicked. It returns the call's *Error, which Stream's
// goroutine delivers to the consumer.
func (c *call) failUnwound(ctx context.Context, err error, committed bool, extra ...attribute.KeyValue) *Error {
	outcome := OutcomeNotRetryable
	if committed {
		outcome = OutcomeCommitted
	}
	if c.liveCancel != nil {
		c.liveCancel()
	}
	if c.live {
		a := attempt{n: c.attempts, span: c.liveSpan}
		c.endAttempt(ctx, &a, err, decision{outcome: outcome})
	}
	e := &Error{Operation: c.operation, Outcome: outcome, Attempts: c.attempts, Err: err}
	c.record(ctx, e, extra...)
	return e
}

package retry

import (
	"context"
	"log/slog"
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/internal/genai"
	"github.com/steadfast-go/steadfast/internal/room"
	"github.com/steadfast-go/steadfast/internal/run"
	"github.com/steadfast-go/steadfast/internal/usage"
)

// call is the state of one logical call (an Invoke, a Batch or a Stream):
// its policy, operation, identity and call span. Invoke keeps it on its
// stack.
type call struct {
	r           *RetryRunnable
	cfg         *RetryConfig
	operation   string
	method      callspan.Method
	maxAttempts int
	depth       int         // how many RetryRunnables' attempts the call runs inside
	first       *attemptCtx // the first attempt's context, root of the InvocationID
	span        trace.Span  // the call span; nil when tracing is off
	recording   bool        // span is recording: build attributes and attempt spans
	attrs       *opAttrs    // nil when tracing and metrics are off
	metrics     bool        // metrics are on
	// timer serves every backoff of the call, reset for each; succeed and
	// fail stop it.
	timer room.Timer
	// liveSpan and liveCancel are the span and timeout of the attempt
	// under way, from startAttempt to endAttempt, so that a call cut short
	// by a panic can end them.
	liveSpan   trace.Span
	liveCancel context.CancelFunc
	attempts   int // attempts started
	// reported is an attempt already reported to the budget (a stream's
	// committing attempt, reported a success at its first chunk): its
	// failure, should it break and be resumed, is not reported again.
	reported int
	// tally counts the call's retries by class, for MaxRetriesByClass
	// (in a Batch, a whole-batch failure's).
	tally classTally
	live  bool // an attempt is under way
	// ended is set once the call's end is recorded.
	ended bool
	// cont is the continuation the call carries on, nil when none.
	cont *Continuation
	// handedOff is set, once and for good, by a Stream's caller's
	// goroutine when it hands the call to the forwarding goroutine, which
	// owns it from then on.
	handedOff bool
	// repairs counts the call's repairs (Invoke, Stream); repairNext says
	// the next attempt is one, for its span.
	repairs    int
	repairNext bool
	// meter counts the call's tokens, nil until the first attempt and
	// when neither a recording span, an enabled retry.tokens counter nor
	// MaxRetryTokens asks for them (metered). It is held by the first
	// attempt's context, and counts under outer, an outer call's
	// attempt's.
	meter   *usage.Meter
	outer   *usage.Meter
	metered bool
	// routeBad is whether the last attempt's failure said its route is
	// bad (routeTurn).
	routeBad bool
	// began, lastEnd and delay are, when metrics are on, when the call
	// began, when its last attempt ended, and the time between its
	// attempts so far: the durations' (durations.go).
	began, lastEnd time.Time
	delay          time.Duration
	// run is the run's budget the call draws its attempts from, nil when
	// its context carries none.
	run run.Budget
}

// begin starts call c, which is zero, and returns the context of its call
// span. Its fields are set one by one: a composite literal would be built
// and copied, 240 bytes, on every call's hot path.
func (r *RetryRunnable) begin(ctx context.Context, c *call, m callspan.Method, opts []core.Option) context.Context {
	op := r.operation(opts)
	cfg := r.policy(op)
	c.r, c.cfg, c.operation, c.method = r, cfg, op, m
	_, nested := ctx.Value(attemptKey{}).(*attemptCtx)
	c.maxAttempts = cfg.attempts(nested)
	if nested {
		c.depth = nesting(ctx)
	}
	c.cont = continuationFrom(ctx)
	ctx = c.joinRun(ctx, c.cont != nil)
	if r.tel.tracer != nil || r.tel.calls != nil {
		c.attrs = r.tel.opAttrs(op, m, cfg.MaxRetries)
		if c.metrics = r.tel.calls != nil; c.metrics {
			c.began = time.Now()
		}
		if r.tel.tracer != nil {
			// Attributes are set at the end, in one call, from prebuilt
			// slices: cheaper than start options, and nothing is built
			// when the span does not record.
			ctx, c.span = r.tel.tracer.Start(ctx, methodSpanNames[m])
			c.recording = c.span.IsRecording()
			if c.recording && c.depth > 0 {
				c.span.SetAttributes(attrNested.Int(c.depth))
			}
		}
	}
	if c.recording || cfg.MaxRetryTokens > 0 || (c.metrics && r.tel.tokens.Enabled(ctx)) {
		c.metered, c.outer = true, usage.From(ctx) // an outer call's attempt counts this call's tokens too
	}
	return ctx
}

// admit asks the budget, if any, whether the call's first attempt may be
// sent, and returns the *Error that ends the call when it refuses: the
// budget's client-side throttle. A call carrying on a continuation has
// made its first attempt already. It is called once the call's unwinding
// is deferred: a budget that panics here panics as any budget does.
func (c *call) admit(ctx context.Context) *Error {
	if c.r.budget == nil || c.prior() > 0 || c.r.budget.Reserve(ctx, 1, 0).OK {
		return nil
	}
	if c.metrics {
		c.r.tel.budgetRefused.Add(ctx, 1, c.attrs.with(attrReason.String(reasonThrottled)))
	}
	return c.newError(decision{outcome: OutcomeBudgetExhausted}, 0, errThrottled)
}

// attempt is one attempt's context, span and timeout.
type attempt struct {
	n      int
	start  time.Time // when it started; zero unless the call has a timeout to read it against
	ctx    context.Context
	span   trace.Span // nil unless the call span is recording
	cancel context.CancelFunc
	meter  *usage.Meter  // the attempt's tokens; nil when the call counts none
	items  usage.Items   // a Batch attempt's, each input's tokens
	gen    *genai.Slot   // the attempt's inference, in the GenAI conventions' mode
	gens   []*genai.Slot // a Batch attempt's, each item's
	// ticket is the attempt's draw on the call's run; refused, the run's
	// refusal, which is the attempt's error: it sends nothing.
	ticket  run.Ticket
	refused error
}

// startAttempt fills a, zero, with attempt n's context: it carries AttemptInfo,
// the attempt span (so the inner Runnable's spans are its children) and,
// when timeout > 0, the attempt's own deadline.
func (c *call) startAttempt(ctx context.Context, a *attempt, n int, timeout time.Duration) {
	a.n = n
	if c.metrics {
		c.attemptStarted(a)
	} else if c.cfg.PerAttemptTimeout > 0 || c.cfg.FirstChunkTimeout > 0 {
		a.start = time.Now() // for a silent route's long wait
	}
	var actx *attemptCtx
	if c.metered { // one allocation for the attempt's context and meters
		ma := new(meteredAttempt)
		if c.meter == nil {
			ma.call.Attach(c.outer)
			c.meter = &ma.call
		}
		ma.meter.Attach(c.meter)
		actx, a.ctx, a.meter = &ma.attemptCtx, ma, &ma.meter
	} else {
		actx = new(attemptCtx)
		a.ctx = actx
	}
	actx.Context, actx.root, actx.attempt, actx.maxAttempts, actx.operation =
		ctx, c.first, int32(n), int32(c.maxAttempts), c.operation
	if actx.root == nil {
		actx.root, c.first = actx, actx
	}
	if c.recording {
		a.ctx, a.span = c.r.tel.tracer.Start(a.ctx, spanAttempt)
	}
	if c.r.tel.genAI != nil && c.method != callspan.Batch {
		a.gen = c.r.tel.genAI.NewSlot(c.method == callspan.Stream, actx.retries())
		actx.gen = a.gen
	}
	if timeout > 0 {
		a.ctx, a.cancel = context.WithTimeoutCause(a.ctx, timeout, ErrAttemptTimeout)
	}
	if c.cont != nil && c.cont.OnAttempt != nil {
		c.cont.OnAttempt(ctx, n)
	}
	if c.repairNext {
		c.repairNext = false
		if a.span != nil {
			a.span.SetAttributes(attrRepaired.Bool(true))
		}
	}
	if c.run != nil && c.method != callspan.Batch { // a Batch draws a call per item it sends
		c.takeRun(a, 1)
	}
	c.attempts, c.live = n, true
	if a.span != nil || a.cancel != nil { // pointer writes cost write barriers: only when needed
		c.liveSpan, c.liveCancel = a.span, a.cancel
	}
}

// result releases the attempt's timeout and returns err, marked with
// ErrAttemptTimeout when the attempt's own deadline (not the caller's)
// expired.
func (a *attempt) result(parent context.Context, err error) error {
	if a.cancel == nil {
		return err
	}
	timedOut := context.Cause(a.ctx) == ErrAttemptTimeout && parent.Err() == nil
	a.cancel()
	if err != nil && timedOut {
		return timedOutError(err)
	}
	return err
}

// endAttempt ends attempt a with its error (nil on success) and, for a
// failure, the decision that follows it.
func (c *call) endAttempt(ctx context.Context, a *attempt, err error, d decision) {
	if err != nil {
		c.discard(a)
	}
	a.ticket.Settle(err)
	c.live = false
	if a.gen != nil || a.gens != nil {
		c.endInferences(ctx, a, err)
	}
	if c.liveSpan != nil || c.liveCancel != nil {
		c.liveSpan, c.liveCancel = nil, nil
	}
	if c.metrics {
		if err == nil {
			c.r.tel.attempts.Add(ctx, 1, c.attrs.attemptOK...)
			c.attemptEnded(ctx, a, c.attrs.recordOK...)
		} else {
			failed := c.attrs.with(attrErrorType.String(errproto.Type(err)))
			c.r.tel.attempts.Add(ctx, 1, failed)
			c.attemptEnded(ctx, a, failed)
		}
	}
	if a.span == nil {
		return
	}
	if err == nil {
		a.span.SetAttributes(attemptAttr(a.n)...)
		a.span.End()
		return
	}
	a.span.SetStatus(codes.Error, err.Error())
	kv := append(attemptAttr(a.n)[:1:1], attrErrorType.String(errproto.Type(err)), attrRetryable.Bool(d.retryable),
		attrClass.String(errproto.Class(err)))
	if d.outcome == "" {
		kv = append(kv, attrBackoff.Float64(d.delay.Seconds()), attrBackoffSource.String(d.source.String()))
	}
	a.span.SetAttributes(kv...)
	a.span.End()
}

// sleep waits d.delay before the attempt after n, after telling the call
// span, the metrics and the hooks; items is the number of items (1 but
// for Batch) to be sent again. It returns the outcome that ends the call
// when the caller's context ends first, else "".
func (c *call) sleep(ctx context.Context, n int, err error, d decision, items int) Outcome {
	if c.recording {
		c.span.AddEvent(eventBackoff, trace.WithAttributes(
			attrAttempt.Int(n), attrBackoff.Float64(d.delay.Seconds())))
	}
	if c.metrics {
		c.r.tel.backoff.Record(ctx, d.delay.Seconds(), c.attrs.recordOK...)
	}
	if len(c.r.onRetry) > 0 {
		ev := RetryEvent{
			Operation: c.operation,
			Method:    c.method.String(),
			Attempt:   n,
			Err:       err,
			Delay:     d.delay,
			Source:    d.source.String(),
			Items:     items,
		}
		for _, hook := range c.r.onRetry {
			hook(ctx, ev)
		}
	}
	if d.delay <= 0 {
		if cerr := ctx.Err(); cerr != nil {
			return ctxOutcome(cerr)
		}
		return ""
	}
	if !c.wait(ctx, d.delay) {
		return ctxOutcome(ctx.Err()) // fail stops the timer
	}
	return ""
}

// wait waits d on the call's one timer, and reports false when ctx ended
// first.
func (c *call) wait(ctx context.Context, d time.Duration) bool { return c.timer.Sleep(ctx, d) }

// newError builds, complete, the *Error of a call, or of a batch item,
// that ended as d says after attempts attempts: its outcome, the class
// whose bound ended it, and the wait not slept when it was handed off.
// The context error follows from the outcome, not from the context as it
// is now: a call stopped early for its deadline is a deadline even if the
// caller cancels a moment later.
func (c *call) newError(d decision, attempts int, last error) *Error {
	if d.run != nil {
		last = runEnded(d.run, last)
	}
	e := &Error{Operation: c.operation, Outcome: d.outcome, Class: d.limit, Attempts: attempts, Err: last}
	switch d.outcome {
	case OutcomeHandedOff:
		e.Wait = d.delay
	case OutcomeCanceled:
		e.ContextErr = context.Canceled
	case OutcomeDeadline:
		e.ContextErr = context.DeadlineExceeded
	}
	return e
}

// discard counts attempt a's tokens as thrown away, unless its output
// reached the caller: a stream's committing attempt (the one reported to
// the budget at its commit) and those resuming it, however they end.
func (c *call) discard(a *attempt) {
	if a.meter != nil && (c.reported == 0 || a.n < c.reported) {
		a.meter.Discard()
	}
}

// discarded is how many tokens the call has thrown away.
func (c *call) discarded() int64 {
	_, _, d, _ := c.meter.Totals()
	return d
}

// tokens counts the call's tokens, by fate, and returns its call span's
// retry.tokens attributes added to extra: none when no usage was reported.
func (c *call) tokens(ctx context.Context, extra []attribute.KeyValue) []attribute.KeyValue {
	in, out, discarded, reported := c.meter.Totals()
	if !reported {
		return extra
	}
	if c.metrics {
		if delivered := in + out - discarded; delivered > 0 {
			c.r.tel.tokens.Add(ctx, delivered, c.attrs.with(attrTokenFate.String("delivered")))
		}
		if discarded > 0 {
			c.r.tel.tokens.Add(ctx, discarded, c.attrs.with(attrTokenFate.String("discarded")))
		}
	}
	if !c.recording {
		return extra
	}
	return append(extra, attrTokensInput.Int64(in), attrTokensOutput.Int64(out), attrTokensDiscarded.Int64(discarded))
}

// succeed ends a call that succeeded on attempt n.
func (c *call) succeed(ctx context.Context, n int, extra ...attribute.KeyValue) {
	c.ended = true
	c.timer.Stop()
	if c.metrics {
		c.r.tel.calls.Add(ctx, 1, c.attrs.callOK...)
		c.callEnded(ctx, n, c.attrs.recordCallOK...)
	}
	if c.meter != nil {
		extra = c.tokens(ctx, extra)
	}
	if c.span == nil {
		return
	}
	if c.recording {
		c.span.SetAttributes(c.attrs.callEnd(n, outcomeSuccess, append(extra, c.r.callAttrs...)...)...)
	}
	c.span.End()
}

// fail ends a call that failed with err: it records the outcome and logs
// the one WARN record of the call.
func (c *call) fail(ctx context.Context, err *Error, extra ...attribute.KeyValue) {
	c.record(ctx, err, extra...)
	if c.r.logger != nil {
		c.r.logger.LogAttrs(ctx, slog.LevelWarn, "retry: call failed",
			slog.String("operation", c.operation),
			slog.String("method", c.method.String()),
			slog.String("outcome", string(err.Outcome)),
			slog.Int("attempts", err.Attempts),
			slog.String("error", err.Error()))
	}
}

// record ends a failed call: it counts it and ends the call span.
func (c *call) record(ctx context.Context, err *Error, extra ...attribute.KeyValue) {
	c.ended = true
	c.timer.Stop()
	if c.meter != nil {
		extra = c.tokens(ctx, extra)
	}
	etype := errproto.Type(err)
	if c.metrics {
		ended := c.attrs.with(attrOutcome.String(string(err.Outcome)), attrErrorType.String(etype))
		c.r.tel.calls.Add(ctx, 1, ended)
		c.callEnded(ctx, err.Attempts, ended)
	}
	if c.span != nil {
		if c.recording {
			c.span.SetAttributes(c.attrs.callEnd(err.Attempts, err.Outcome, append(append(extra, c.r.callAttrs...), attrErrorType.String(etype))...)...)
			c.span.SetStatus(codes.Error, err.Error())
		}
		c.span.End()
	}
}

// retryOrStop is what follows a failed Invoke or Stream attempt a, sent
// *in (nil: not to be repaired): a repair, which changes *in, or the
// decision, the end of the attempt and the backoff. It returns nil when
// the next attempt may start, else the *Error that ends the call.
func (c *call) retryOrStop(ctx context.Context, a *attempt, err error, in *any) *Error {
	err = c.routeTurn(ctx, a, err)
	c.discard(a) // before the rules, which count what the call threw away
	fs := [1]failure{{err: err, tally: c.tally, tallied: true, repaired: c.repairs}}
	if c.cfg.MaxRetryTokens > 0 {
		fs[0].discarded = c.discarded()
	}
	d := c.plan(ctx, a.n, fs[:])
	c.tally = fs[0].tally
	c.endAttempt(ctx, a, err, d)
	if in != nil && c.repairable(d.outcome, err, c.repairs) {
		next, fault := c.repair(ctx, a.n, *in, err)
		if fault != nil {
			return c.newError(d, a.n, fault)
		}
		if next != nil {
			*in, c.repairs, c.repairNext = next, c.repairs+1, true
			return nil
		}
	}
	if d.outcome == "" {
		if d.outcome = c.sleep(ctx, a.n, err, d, 1); d.outcome != "" {
			giveBack(fs[:])
		}
	}
	if d.outcome != "" {
		return c.newError(d, a.n, err)
	}
	return nil
}

// stopped returns the *Error of a call whose caller's context is done
// before its next attempt, after attempts attempts, else nil.
func (c *call) stopped(ctx context.Context, attempts int, last error) *Error {
	if cerr := ctx.Err(); cerr != nil {
		return c.newError(decision{outcome: ctxOutcome(cerr)}, attempts, last)
	}
	return nil
}

// reserveRetry asks the budget, if any, for attempt n, a retry: the wait a
// pacing budget asks for, whether it is allowed, and how to give it back.
// The longest wait it may answer is half of what the caller's deadline
// leaves, so that the retry keeps the other half for its attempt. It
// counts a refusal.
func (c *call) reserveRetry(ctx context.Context, n int) core.Reservation {
	if c.r.budget == nil {
		return core.Reservation{OK: true}
	}
	maxWait := maxBudgetWait
	if dl, ok := ctx.Deadline(); ok {
		maxWait = max(time.Until(dl)/2, time.Nanosecond)
	}
	res := c.r.budget.Reserve(ctx, n, maxWait)
	if !res.OK && c.metrics {
		c.r.tel.budgetRefused.Add(ctx, 1, c.attrs.with(attrReason.String(reasonRetryBudget)))
	}
	return res
}

// maxBudgetWait is the retry layer's bound on a budget's wait when the
// call has no deadline: none of its own. The budget's setting bounds it.
const maxBudgetWait = time.Duration(math.MaxInt64)

// recordAttempt tells the budget, if any, how attempt n was answered.
func (c *call) recordAttempt(ctx context.Context, n int, accepted bool) {
	if c.r.budget != nil {
		c.r.budget.RecordAttempt(ctx, n, accepted)
	}
}

// recordSuccess tells the budget that attempt n (or a Batch item's) succeeded.
func (c *call) recordSuccess(ctx context.Context, n int) {
	if c.r.budget != nil {
		c.r.budget.RecordAttempt(ctx, n, true)
	}
}

// check runs CheckOutput, if any, on an attempt's output.
func (c *call) check(ctx context.Context, input, output any) error {
	if c.cfg.CheckOutput == nil {
		return nil
	}
	if err := c.cfg.CheckOutput(ctx, input, output); err != nil {
		return &outputError{Err: err, output: output}
	}
	return nil
}

// nextInput returns the input of the attempt after one that was sent input
// and failed with err.
func (c *call) nextInput(ctx context.Context, input any, err error) any {
	if c.cfg.NextInput == nil {
		return input
	}
	return c.cfg.NextInput(ctx, input, err)
}

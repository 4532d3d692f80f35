package pool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/errproto"
	"github.com/steadfast-go/steadfast/internal/genai"
	"github.com/steadfast-go/steadfast/internal/room"
	"github.com/steadfast-go/steadfast/internal/route"
	"github.com/steadfast-go/steadfast/internal/run"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/internal/usage"
	"github.com/steadfast-go/steadfast/retry"
)

// UnavailableError is the pool's refusal when no deployment can serve: each
// is cooling down after failures, dead (its failure said it cannot serve
// at all), or out of room until its provider's reset for longer than the
// call may wait (WithMaxWait, the context's deadline). It is made on this
// side of the wire (Local), and retryable after Wait, when the first
// deployment is back, unless every deployment is dead. A retry layer waits
// exactly that; a fallback moves to its next candidate (Local refusals are
// ones it cannot serve).
type UnavailableError struct {
	// Wait is how long until the first deployment is back.
	Wait time.Duration
	// Deployments are the pool's deployments, each with why it cannot
	// serve and until when.
	Deployments []Unavailable
	at          time.Time // when it was made
}

// Error names each deployment and why it cannot serve.
func (e *UnavailableError) Error() string {
	if len(e.Deployments) == 0 {
		return fmt.Sprintf("pool: every deployment is cooling down; the first is back in %v", e.Wait)
	}
	return fmt.Sprintf("pool: no deployment can serve; the first is back in %v: %s", e.Wait.Round(time.Millisecond), e.describe(e.at))
}

// Local reports true: no deployment was called.
func (e *UnavailableError) Local() bool { return true }

// Retryable reports whether a deployment may serve after Wait: not while
// every deployment is dead (a revoked key, an exhausted quota), which no
// retry of this call outlasts.
func (e *UnavailableError) Retryable() bool { return !e.allDead() }

// RetryAfter is Wait.
func (e *UnavailableError) RetryAfter() time.Duration { return e.Wait }

// deploymentError is a deployment's failure with the pool's hint in place
// of the deployment's own, which cools the deployment down rather than
// delays the pool: while another deployment can serve, the shortest hint
// there is, now, so the retry layer sends the next attempt at once, to
// another deployment; else the wait until the first deployment is back.
type deploymentError struct {
	deployment string
	err        error
	after      time.Duration
}

// diedError is the failure of a deployment that died while another can
// serve: retryable, whatever the dead one's own verdict (a 401 is not the
// next deployment's), at once.
type diedError struct{ deploymentError }

// Retryable reports true: another deployment can serve the call.
func (e *diedError) Retryable() bool { return true }

func (e *deploymentError) Error() string {
	return "pool: deployment " + e.deployment + ": " + e.err.Error()
}

func (e *deploymentError) Unwrap() error { return e.err }

// RetryAfter is the pool's hint.
func (e *deploymentError) RetryAfter() time.Duration { return e.after }

// enter starts a call on d: counted as under way, and named on the span in
// ctx with the deployment's call attributes. It reports d's return from a
// cooldown there too.
func (r *Runnable) enter(ctx context.Context, d *deployment) {
	d.inflight.Add(1)
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		d.returned()
		return
	}
	span.SetAttributes(attrDeployment.String(d.Name))
	if d.Group != "" {
		span.SetAttributes(attrGroup.String(d.Group))
	}
	if genai.From(ctx) == nil || !genai.IsInference(d.attrs) { // else the inference span carries them
		span.SetAttributes(d.attrs...)
	}
	if d.returned() {
		span.AddEvent("pool.return", trace.WithAttributes(attrDeployment.String(d.Name)))
	}
}

// failed records err, the failure of a call on d, and returns the error
// the caller gets. Only the deployment's own failures count toward its
// cooldown: never the caller's cancellation or deadline, a refusal made on
// this side of the wire (Local: the deployment's limiter or breaker), or a
// status that is the request's fault. A local refusal still sends the
// call's next attempt elsewhere, as the deployment cannot take it now.
func (r *Runnable) failed(ctx context.Context, d *deployment, err error) error {
	if callerEnded(ctx) {
		return err
	}
	now := time.Now()
	if why, dead := deadBecause(err); dead {
		r.kill(ctx, d, now, why)
		if r.canServe(now, 0) { // the next attempt goes elsewhere, at once
			return &diedError{deploymentError{deployment: d.Name, err: err, after: time.Nanosecond}}
		}
		return r.unavailable(now, now.Add(r.firstBack(now)))
	}
	if code, ok := errproto.Status(err); ok && requestsFault(code) {
		return err // it would fail the same way anywhere
	}
	if retry, ok := errproto.Retryable(err); ok && !retry {
		// Not dead, yet no retry fixes it: the request's fault (one larger
		// than a token limit), not the deployment's.
		return err
	}
	own := !errproto.Local(err)
	if own {
		hint, _ := errproto.RetryAfter(err)
		r.coolMu.Lock()
		var ps peers
		if hint == 0 && r.mayEject(now) {
			ps = r.peersOf(d, now)
		}
		cooled := d.fail(now, hint, r.allowed, r.window, r.cooldown, ps)
		var group []*deployment
		if d.group != nil && errproto.Class(err) == errproto.ClassRateLimit {
			group = r.coolGroup(d, now, cmp.Or(hint, r.cooldown))
		}
		if hint > 0 || group != nil {
			r.yield(now)
		}
		r.coolMu.Unlock()
		if cooled {
			r.reportCooldown(ctx, d)
		}
		for _, m := range group {
			r.reportCooldown(ctx, m)
		}
	}
	r.triedMu.Lock()
	mask, _ := r.tried.Load(ctx)
	mask |= bit(d)
	r.tried.Store(ctx, mask)
	r.triedMu.Unlock()
	if r.canServe(now, mask|bit(d)) {
		return &deploymentError{deployment: d.Name, err: err, after: time.Nanosecond}
	}
	if back := r.firstBack(now); own && back > 0 {
		return &deploymentError{deployment: d.Name, err: err, after: back}
	}
	return err
}

// coolGroup cools every member of d's group, d included, for wait from
// now: a rate limit on one is the quota they share. It returns the
// members that started cooling down (d only when its own failure did not
// already). It runs under r.coolMu.
func (r *Runnable) coolGroup(d *deployment, now time.Time, wait time.Duration) []*deployment {
	var started []*deployment
	for _, m := range d.group {
		m.mu.Lock()
		if m.hold(now, now.Add(wait)) {
			started = append(started, m)
		}
		m.mu.Unlock()
	}
	return started
}

// reportCooldown tells the span in ctx and the pool.cooldowns counter that
// d started cooling down, with its group.
func (r *Runnable) reportCooldown(ctx context.Context, d *deployment) {
	attrs := d.cooldownAttrs()
	r.cooldowns.Add(ctx, 1, metric.WithAttributes(attrs...))
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("pool.cooldown", trace.WithAttributes(attrs...))
	}
}

// cooldownAttrs names d, and its group when it has one.
func (d *deployment) cooldownAttrs() []attribute.KeyValue {
	if d.Group == "" {
		return []attribute.KeyValue{attrDeployment.String(d.Name)}
	}
	return []attribute.KeyValue{attrDeployment.String(d.Name), attrGroup.String(d.Group)}
}

// firstBack is the wait until the first deployment cooling down is back,
// 0 when none is cooling down.
func (r *Runnable) firstBack(now time.Time) time.Duration {
	var first time.Duration
	for _, d := range r.deps {
		if until := d.unavailableUntil(now); !until.IsZero() && (first == 0 || until.Sub(now) < first) {
			first = until.Sub(now)
		}
	}
	return first
}

func bit(d *deployment) uint64 {
	if d.index >= 64 {
		return 0
	}
	return 1 << d.index
}

// canServe reports whether a deployment outside failed is not cooling down.
func (r *Runnable) canServe(now time.Time, failed uint64) bool {
	for _, d := range r.deps {
		if d.unavailableUntil(now).IsZero() && (d.index >= 64 || failed&(1<<d.index) == 0) {
			return true
		}
	}
	return false
}

// failedMask returns the deployments that failed the call whose state is
// ctx belongs to (none outside a retry layer).
func (r *Runnable) failedMask(ctx context.Context) uint64 {
	return r.triedOr(ctx, r.planOf(ctx))
}

// triedOr is the deployments that failed the call whose state ctx belongs
// to, and those its plan p excludes: never another way for the call.
func (r *Runnable) triedOr(ctx context.Context, p *plan) uint64 {
	m, _ := r.tried.Load(ctx)
	if p != nil {
		m |= p.excluded
	}
	return m
}

// fail records one of d's own failures at now, with the server's hint, and
// reports whether d started cooling down: held out for the hint, or
// ejected as an outlier of its peers ps (eject.go).
func (d *deployment) fail(now time.Time, hint time.Duration, allowed int, window, cooldown time.Duration, ps peers) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.roll(now, window)
	d.calls++
	d.fails++
	switch {
	case hint > 0:
		return d.hold(now, now.Add(hint))
	case d.outlier(allowed, ps):
		until := now.Add(d.ejection(now, window, cooldown))
		d.calls, d.fails = 0, 0
		return d.coolUntil(now, until)
	}
	return false
}

// hold keeps d out of rotation on its server's word until then at least,
// and reports whether it started cooling down. It runs under d.mu.
func (d *deployment) hold(now, until time.Time) bool {
	if until.After(d.held) {
		d.held = until
	}
	return d.coolUntil(now, until)
}

// coolUntil keeps d out of rotation until then at least, and reports
// whether it started cooling down (it was not at now).
func (d *deployment) coolUntil(now, until time.Time) bool {
	cur := d.until.Load()
	started := now.UnixNano() >= cur
	if until.UnixNano() > cur {
		d.until.Store(until.UnixNano())
	}
	if started {
		d.cooling.Store(true)
	}
	return started
}

// succeed records one of d's calls that succeeded at now.
func (d *deployment) succeed(now time.Time, window time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.roll(now, window)
	d.calls++
}

// roll starts a new window of counts when the current one has passed.
func (d *deployment) roll(now time.Time, window time.Duration) {
	if now.Sub(d.since) >= window {
		d.since, d.calls, d.fails = now, 0, 0
	}
}

// returned reports, once per cooldown, that d is back. It takes no lock:
// it runs on every call.
func (d *deployment) returned() bool {
	return d.cooling.Load() && d.coolsUntil(time.Now()).IsZero() && d.cooling.CompareAndSwap(true, false)
}

// silent reports whether a stream was cancelled, before its first chunk,
// by the retry layer's own timeout of the attempt: its deployment sent
// nothing in that time. A hedge's or a fallback's cancellation is not.
func silent(ctx context.Context, res streams.Result) bool {
	return res.Chunks == 0 && errors.Is(context.Cause(ctx), retry.ErrAttemptTimeout)
}

// callerEnded reports a context cancelled, or past its deadline, by the
// caller, rather than with a cause of its own (a retry layer's per-attempt
// timeout is the deployment being slow).
func callerEnded(ctx context.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	cause := context.Cause(ctx)
	return cause == context.Canceled || cause == context.DeadlineExceeded
}

// Invoke calls one deployment: see the package doc. A deployment that
// turns out dead (see WithDeadCooldown) is taken out of rotation and the
// call goes on at once to another, within the same attempt.
func (r *Runnable) Invoke(ctx context.Context, input any, opts ...core.Option) (any, error) {
	ctx, p, err := r.planned(ctx)
	if err != nil {
		return nil, err
	}
	for {
		c, err := r.next(ctx, input, perToken, p)
		if err != nil {
			return nil, err
		}
		r.sayElsewhere(ctx, c)
		out, err := r.invokeOn(ctx, c, input, opts)
		if err == nil {
			return out, nil
		}
		if !r.died(ctx, c.d, err) {
			return nil, r.failed(ctx, c.d, err)
		}
	}
}

// sayElsewhere tells a retry layer above, inside a fallback's candidate,
// whether a deployment other than c's can take the call's next attempt:
// then a silent deployment ends its own turn, not the candidate's.
func (r *Runnable) sayElsewhere(ctx context.Context, c choice) {
	if route.HasAlternative(ctx) {
		route.SetElsewhere(ctx, r.canServe(c.now, r.failedMask(ctx)|bit(c.d)))
	}
}

// next chooses the deployment of a call's attempt. While none has room
// only because their providers' headers say so, it waits for the first
// reset and chooses again then, taking its turn among the calls that
// waited with it (room.Await: within WithMaxWait and the context's
// deadline). A cooldown after failures is not waited for: the retry layer
// decides what to do with it. Either refusal is the *UnavailableError of
// the last choice, whose RetryAfter says when the first deployment is
// back; a context that ends during the wait is the call's error.
func (r *Runnable) next(ctx context.Context, input any, k speedKind, p *plan) (choice, error) {
	var c choice
	waited, err := room.Await(ctx, room.Bound{Max: r.maxWait}, func() core.Reservation {
		c = r.choose(ctx, input, r.triedOr(ctx, p), k, p)
		if c.d != nil {
			return room.Go()
		}
		return room.After(c.until.Sub(c.now), c.paced)
	})
	return c, r.waitEnded(ctx, c, waited, err)
}

// invokeOn calls c's deployment.
func (r *Runnable) invokeOn(ctx context.Context, c choice, input any, opts []core.Option) (any, error) {
	ctx, ticket, err := run.Take(ctx, 1)
	if err != nil {
		return nil, err
	}
	r.enter(ctx, c.d)
	defer c.d.inflight.Add(-1)
	// The answer's output tokens, counted under a meter of the pool's own
	// (under the caller's, if any), score its speed per token.
	mctx, m := usage.Under(ctx, usage.From(ctx))
	out, err := c.d.Runnable.Invoke(mctx, input, opts...)
	if err != nil {
		ticket.Settle(err)
		return nil, err
	}
	end := time.Now() // two clock reads a call: the choice's, and this one
	_, output, _, reported := m.Totals()
	c.d.speed.observeInvoke(end.Sub(c.now), output, reported)
	c.d.succeed(end, r.window)
	return out, nil
}

// died reports whether err, d's failure, says d cannot serve at all, and
// then takes d out of rotation: the call goes on to another deployment.
// The caller's own end is never d's death.
func (r *Runnable) died(ctx context.Context, d *deployment, err error) bool {
	why, dead := deadBecause(err)
	if !dead || callerEnded(ctx) {
		return false
	}
	r.kill(ctx, d, time.Now(), why)
	return true
}

// Stream opens the stream of one deployment, chosen at creation, and
// forwards it; an error value counts as the deployment's failure.
func (r *Runnable) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	ctx, p, err := r.planned(ctx)
	if err != nil {
		return nil, err
	}
	for {
		c, err := r.next(ctx, input, firstChunk, p)
		if err != nil {
			return nil, err
		}
		r.ownerKey.Store(ctx, c.d.Name)
		r.sayElsewhere(ctx, c)
		sctx, ticket, err := run.Take(ctx, 1)
		if err != nil {
			return nil, err
		}
		ch, err := r.stream(sctx, c.d, func() (<-chan any, error) { return c.d.Runnable.Stream(sctx, input, opts...) })
		ticket.Settle(err)
		if !errors.Is(err, errDied) {
			return ch, err
		}
	}
}

// errDied is stream's answer when its deployment died at creation: the
// call goes on to another.
var errDied = errors.New("pool: the deployment died")

// Resume continues a stream on the deployment that served it (kept in
// the call's core.State), as that deployment's Resume. It answers
// core.ErrNotResumable when that deployment cannot resume, or the stream
// is not known.
func (r *Runnable) Resume(ctx context.Context, input any, last any, opts ...core.Option) (<-chan any, error) {
	if d := r.owner(ctx); d != nil {
		if resumer, ok := d.Runnable.(core.Resumer); ok && resumer.CanResume(ctx) {
			if d.pace != nil {
				// Only d can resume the stream: it goes whatever its
				// headers say is left, counted when they leave room (when
				// they leave none, the calls after it wait all the same).
				d.pace.Reserve(time.Now(), 0)
			}
			ctx, ticket, err := run.Take(ctx, 1)
			if err != nil {
				return nil, err
			}
			ch, err := r.stream(ctx, d, func() (<-chan any, error) { return resumer.Resume(ctx, input, last, opts...) })
			ticket.Settle(err)
			return ch, err
		}
	}
	return nil, fmt.Errorf("pool: no deployment to resume the stream on: %w", streams.ErrNotResumable)
}

// owner returns the deployment that served the stream of the call whose
// ctx belongs to, nil when none of this pool's did.
func (r *Runnable) owner(ctx context.Context) *deployment {
	if name, ok := r.ownerKey.Load(ctx); ok {
		for _, d := range r.deps {
			if d.Name == name {
				return d
			}
		}
	}
	return nil
}

// stream opens a stream on d and forwards it until it ends.
func (r *Runnable) stream(ctx context.Context, d *deployment, open func() (<-chan any, error)) (<-chan any, error) {
	r.enter(ctx, d)
	entered := true
	defer func() {
		if entered { // the call did not reach the forwarder: it failed or panicked
			d.inflight.Add(-1)
		}
	}()
	start := time.Now()
	ch, err := open()
	if err == nil && ch == nil {
		err = errors.New("pool: deployment " + d.Name + "'s Stream returned neither a channel nor an error")
	}
	if err != nil {
		if r.died(ctx, d, err) {
			return nil, errDied
		}
		return nil, r.failed(ctx, d, err)
	}
	out := make(chan any)
	entered = false
	go func() {
		defer close(out)
		defer d.inflight.Add(-1)
		first := true
		seen := func(any) { // the time to the first chunk scores d's streams
			if first {
				first = false
				d.speed.observe(firstChunk, time.Since(start).Seconds())
			}
		}
		switch res := streams.Pump(ctx, ch, out, streams.PumpConfig{HoldErrors: true, Seen: seen}); res.End {
		case streams.Failed:
			// Counted before the consumer has it: a retry that tries
			// again at once is routed with this failure known.
			_ = r.failed(ctx, d, res.Err)
			streams.Send(ctx, out, res.Err)
		case streams.Completed:
			d.succeed(time.Now(), r.window)
		case streams.Canceled:
			if silent(ctx, res) {
				// The retry layer's FirstChunkTimeout: d sent nothing, so
				// the next attempt goes to another deployment.
				_ = r.failed(ctx, d, context.Cause(ctx))
			}
		}
	}()
	return out, nil
}

// CanResume reports whether the stream of ctx's call can resume: on the
// deployment that served it. Outside a call, whether any deployment can.
func (r *Runnable) CanResume(ctx context.Context) bool {
	if core.StateFrom(ctx) == nil {
		for _, d := range r.deps {
			if streams.CanResume(ctx, d.Runnable) {
				return true
			}
		}
		return false
	}
	d := r.owner(ctx)
	return d != nil && streams.CanResume(ctx, d.Runnable)
}

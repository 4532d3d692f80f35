package pool

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadfast-go/steadfast/internal/errproto"
)

// defaultDeadCooldown is how long a dead deployment is out of rotation
// unless WithDeadCooldown says otherwise: long enough for a key to be
// replaced or a bill paid, short enough to notice.
const defaultDeadCooldown = 5 * time.Minute

// WithDeadCooldown sets how long a dead deployment is out of rotation: one
// whose failure says it cannot serve at all, whatever the request: a 401,
// 402, 403 or 404, or an error whose CannotServe() method says so (the
// providers' adapters say it of an exhausted quota or billing:
// llmhttp.APIError's CannotServe). The default is 5 minutes: long enough
// for a key to be replaced or a bill paid, short enough to notice.
func WithDeadCooldown(d time.Duration) Option {
	return func(c *config) { c.deadCooldown = d }
}

// deadStatus are the statuses that say a deployment cannot serve: its key
// is revoked or unpaid, or the model is not deployed there.
var deadStatus = map[int]bool{
	http.StatusUnauthorized:    true,
	http.StatusPaymentRequired: true,
	http.StatusForbidden:       true,
	http.StatusNotFound:        true,
}

// deadBecause says why err, a deployment's failure, means the deployment
// cannot serve at all, and whether it does: its status says so, or its
// provider's adapter did, through the error protocol (CannotServe: an
// exhausted quota, billing). The pool knows no provider's codes.
func deadBecause(err error) (string, bool) {
	code, hasStatus := errproto.Status(err)
	typ := errproto.Type(err)
	switch {
	case errproto.CannotServe(err):
		if hasStatus {
			return fmt.Sprintf("%d %s", code, typ), true
		}
		return typ, true
	case hasStatus && deadStatus[code]:
		if typ != fmt.Sprint(code) {
			return fmt.Sprintf("%d %s", code, typ), true
		}
		return fmt.Sprintf("%d %s", code, http.StatusText(code)), true
	}
	return "", false
}

// kill takes d out of rotation for the dead cooldown, for why, and
// reports it on the span in ctx and in pool.dead.
func (r *Runnable) kill(ctx context.Context, d *deployment, now time.Time, why string) {
	d.mu.Lock()
	until := now.Add(r.deadCooldown).UnixNano()
	d.deadUntil.Store(until)
	if until > d.until.Load() { // out of rotation: the one time every call reads
		d.until.Store(until)
	}
	d.deadWhy = why
	d.mu.Unlock()
	d.cooling.Store(true)
	r.coolMu.Lock()
	r.yield(now) // a dead key counts toward the share out, as a hint does
	r.coolMu.Unlock()
	r.deaths.Add(ctx, 1, metric.WithAttributes(attrDeployment.String(d.Name)))
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("pool.dead", trace.WithAttributes(attrDeployment.String(d.Name), attrReason.String(why)))
	}
}

// unavailable is the refusal of a call that found no deployment to serve,
// naming each and why; until is when the first is back.
func (r *Runnable) unavailable(now, until time.Time) *UnavailableError {
	e := &UnavailableError{Wait: until.Sub(now), at: now}
	for _, d := range r.deps {
		u := Unavailable{Name: d.Name, Until: d.unavailableUntil(now)}
		d.mu.Lock()
		switch {
		case d.deadUntil.Load() > now.UnixNano() && d.deadUntil.Load() >= u.Until.UnixNano():
			u.Reason, u.Dead = "dead: "+d.deadWhy, true
		case u.Until.After(d.coolsUntil(now)):
			u.Reason = "no requests left until its limits reset"
		default:
			u.Reason = "cooling down"
		}
		d.mu.Unlock()
		e.Deployments = append(e.Deployments, u)
	}
	return e
}

// Unavailable is one deployment of a pool that cannot serve: until when,
// and why.
type Unavailable struct {
	Name   string
	Reason string    // "dead: 401 invalid_api_key", or "cooling down"
	Dead   bool      // its failure said it cannot serve at all
	Until  time.Time // when it is back in rotation
}

// describe is e's list of deployments and why each cannot serve.
func (e *UnavailableError) describe(now time.Time) string {
	parts := make([]string, len(e.Deployments))
	for i, u := range e.Deployments {
		parts[i] = fmt.Sprintf("%s %s for %v", u.Name, u.Reason, u.Until.Sub(now).Round(time.Millisecond))
	}
	return strings.Join(parts, "; ")
}

// allDead reports whether every deployment is dead.
func (e *UnavailableError) allDead() bool {
	for _, u := range e.Deployments {
		if !u.Dead {
			return false
		}
	}
	return len(e.Deployments) > 0
}

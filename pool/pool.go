// Package pool serves one model from several deployments (API keys,
// regions, clouds), each with its own quota: every attempt goes to a
// deployment that can serve, a retry goes to another one, a deployment that
// fails or asks to be left alone cools down for a while, and a conversation
// can stay on the deployment whose prompt cache is warm.
//
// Put the pool inside the retry layer, so that each attempt is a fresh
// choice, and per-deployment limiters and breakers inside the pool:
//
//	p, err := pool.New([]pool.Deployment{
//		{Name: "eastus", Runnable: breaker.Middleware(st)(east)},
//		{Name: "westeu", Runnable: breaker.Middleware(st)(west)},
//	}, pool.WithAffinity(func(_ context.Context, in any) string { return sessionOf(in) }))
//	r := retry.NewRetryRunnable(p, cfg)
//
// Each attempt picks, among the deployments not cooling down, the less
// loaded of two drawn at random (weighted by Weight and recent speed: time
// to the first chunk for a stream, seconds per output token for an Invoke);
// the attempts of one call avoid deployments that already failed it while
// another can serve. A deployment cools down on its server's Retry-After
// hint, or is ejected as an outlier after repeated failures of its own
// that its peers do not share, for a time that doubles with each ejection
// and is forgiven after clean windows (WithCooldown), never more than half
// of the pool at once (WithMaxEjected), and none in an outage of them all;
// only its own failures count, never the
// caller's cancellation, a Local() refusal or a 4xx that is the request's
// fault (400, 413, 422). A deployment whose failure says it cannot serve
// at all (401, 402, 403, 404, or an API code for an exhausted quota or
// billing: a revoked or unpaid key, a model not deployed there) is dead:
// it is out of rotation for WithDeadCooldown, and the call goes on at once
// to another deployment, within the same attempt.
//
// Deployments that share one upstream quota (Deployment.Group) cool down
// together on a rate limit: the next attempt goes to another group.
//
// A deployment tagged with route.Tag (a region, a retention policy, a
// price) serves only the calls whose route constraints (route.With) it
// meets: the others never reach it, and a call that no deployment meets
// fails at once with a *route.Error.
//
// A deployment whose Runnable reads its provider's rate-limit headers
// (a RateLimits method, as the providers' adapters have) is passed over once
// they say it has no request left until their reset. When that alone
// leaves no deployment, the call waits in the pool for the first reset,
// up to WithMaxWait and its context's deadline, and takes its turn then:
// no 429 is met and no retry spent. Otherwise, when no deployment can
// serve, the pool refuses at once with an *UnavailableError that names
// each and why, whose RetryAfter() is the wait until the first is back,
// and which is not retryable while every deployment is dead.
//
// Batch spreads its items over deployments; Stream picks at creation, and
// Resume goes back to the deployment that served the stream.
package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/callspan"
	"github.com/steadfast-go/steadfast/internal/pace"
	"github.com/steadfast-go/steadfast/internal/route"
	"github.com/steadfast-go/steadfast/internal/version"
)

// ScopeName is the OpenTelemetry instrumentation scope of the meter.
const ScopeName = "github.com/steadfast-go/steadfast/pool"

// attrDeployment is the deployment an attempt went to, on the span in its
// context (the retry layer's attempt span) and on the pool.cooldowns
// counter.
const attrDeployment = attribute.Key("pool.deployment")

// attrGroup is the quota group of a deployment that cooled down, on the
// pool.cooldown event and counter, and of the deployment an attempt went
// to.
const attrGroup = attribute.Key("pool.group")

// attrReason is why a deployment died, on the pool.dead event: its status
// and API code ("401 invalid_api_key").
const attrReason = attribute.Key("pool.reason")

// Deployment is one place the model is served from.
type Deployment struct {
	// Name identifies the deployment in telemetry and errors; names must
	// be unique within a pool.
	Name string
	// Runnable serves the calls sent to the deployment: the provider's
	// client, usually behind its own limiter and breaker.
	Runnable core.Runnable
	// Weight is the deployment's share of the load relative to the others
	// (its capacity); 0 means 1.
	Weight float64
	// Group names the upstream quota the deployment shares with the
	// others of the same Group: one organisation's keys, regions behind
	// one tokens-per-minute limit. A rate limit on one member (a 429) is
	// the group's: every member cools down for the server's wait, or for
	// the pool's cooldown when it gave none, and the call goes on at once
	// to another group, or waits as when no deployment can serve. A dead
	// member (a revoked key) is still its own. "" is a group of one.
	Group string
}

// WithCooldown's defaults.
const (
	defaultAllowedFails = 3
	defaultWindow       = time.Minute
	defaultCooldown     = 5 * time.Second
)

// Option configures a pool. Nil options are ignored.
type Option func(*config)

type config struct {
	affinity     func(context.Context, any) string
	allowedFails int
	window       time.Duration
	cooldown     time.Duration
	maxEjected   float64
	deadCooldown time.Duration
	maxWait      time.Duration
	mp           metric.MeterProvider
}

// WithAffinity keeps the calls with the same key (a conversation, a user)
// on the same deployment while it can serve, so its prompt cache stays
// warm; key returns "" for a call with no affinity. The deployment is
// chosen by rendezvous hashing, weighted: adding a deployment, or one
// cooling down, moves only the keys that must move.
func WithAffinity(key func(ctx context.Context, input any) string) Option {
	return func(c *config) {
		if key != nil {
			c.affinity = key
		}
	}
}

// WithCooldown sets when a deployment is ejected as an outlier, and for
// how long: after allowedFails of its own failures within window (the
// least volume), when they are at least half of its calls in that window,
// and when its success rate in it is below its peers' (the others in
// rotation, taken together) by more than chance explains: the upper bound
// of its rate, a Wilson interval of 3 deviations, under the lower bound of
// theirs. Failures every deployment shares, in a provider-wide outage or
// an overload of them all, eject none. It is out for cooldown times
// 2^n, n its ejections not yet forgiven, at most 60 cooldowns, less up to
// a tenth at random; each window that passes from its return without
// another ejection forgives one. A server's hint holds a deployment out
// for the hint at once, whatever these say.
//
// The defaults are LiteLLM Router's, the most used router of LLM
// deployments: a deployment that fails 3 times within a minute cools down
// for 5 seconds (its allowed_fails and DEFAULT_COOLDOWN_TIME_SECONDS),
// provided those failures are at least half of its calls in that minute
// (its DEFAULT_FAILURE_THRESHOLD_PERCENT), so that a busy deployment that
// fails a few calls in many is not taken out of rotation; the growth and
// the comparison with the peers are Envoy's and gRPC's outlier detection.
func WithCooldown(allowedFails int, window, cooldown time.Duration) Option {
	return func(c *config) { c.allowedFails, c.window, c.cooldown = allowedFails, window, cooldown }
}

// WithMaxEjected sets the largest share of the deployments that may be
// out of rotation for ejection to take one more (one always may be); the
// default is half. Deployments a server's hint or a dead key holds out
// count toward it, and when a hint or a dead key puts more than the share
// out, ejected deployments come back, the one due first first. share must be more
// than 0 and at most 1.
func WithMaxEjected(share float64) Option {
	return func(c *config) { c.maxEjected = share }
}

// WithMeterProvider sets the meter provider of the pool.cooldowns and
// pool.dead counters; the default is the global one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	}
}

// Runnable is a core.Runnable over a pool of deployments. It is safe for
// concurrent use.
type Runnable struct {
	deps     []*deployment
	affinity func(context.Context, any) string
	allowed  int
	window   time.Duration
	cooldown time.Duration
	// maxEjected is the share of the deployments that may be out for
	// ejection to take one more (eject.go).
	maxEjected float64
	cooldowns  metric.Int64Counter
	deaths     metric.Int64Counter
	// deadCooldown is how long a dead deployment is out of rotation.
	deadCooldown time.Duration
	// maxWait is how long a call waits at most for a reset of its
	// deployments' providers' limits.
	maxWait time.Duration
	// tried and owner are this pool's entries in each call's core.State:
	// the deployments that failed the call (bits), and the name of the
	// deployment its stream was served by (durable, for a Resume in
	// another process).
	tried    *core.StateKey[uint64]
	ownerKey *core.StateKey[string]
	// coolMu makes "may this failure cool its deployment?" and the
	// cooling one decision, so that concurrent failures never cool more
	// than half of the pool. Only failures take it.
	coolMu sync.Mutex
	// triedMu makes a failure's read and write of tried one step: the
	// requests of one call (a hedge's, a Batch's groups) may fail at once.
	// Only failures take it.
	triedMu sync.Mutex
	idem    bool
	// routes are the deployments' tags and prices, known every tag among
	// them, least the least known price (constraints.go).
	routes []route.Candidate
	known  []string
	least  float64
}

// New returns a pool of deployments. It reports an error when there is no
// deployment, one has no Runnable, no name or a name already used, a weight
// is negative or not finite, WithCooldown's values are not positive, or
// WithMaxEjected's share is not in (0, 1].
func New(deployments []Deployment, opts ...Option) (*Runnable, error) {
	c := config{allowedFails: defaultAllowedFails, window: defaultWindow, cooldown: defaultCooldown, maxEjected: defaultMaxEjected, deadCooldown: defaultDeadCooldown, maxWait: defaultMaxWait}
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	if err := c.validate(len(deployments)); err != nil {
		return nil, err
	}
	r := &Runnable{affinity: c.affinity, allowed: c.allowedFails, window: c.window, cooldown: c.cooldown, maxEjected: c.maxEjected, idem: true,
		deadCooldown: c.deadCooldown, maxWait: c.maxWait,
		tried: core.NewStateKey[uint64]("")}
	if err := r.add(deployments); err != nil {
		return nil, err
	}
	if err := r.tagDeployments(); err != nil {
		return nil, err
	}
	names := make([]string, len(r.deps))
	for i, d := range r.deps {
		names[i] = d.Name
	}
	r.ownerKey = core.NewStateKey[string]("pool.deployment:" + strings.Join(names, ","))
	if err := r.counters(c.mp); err != nil {
		return nil, err
	}
	return r, nil
}

func (c *config) validate(deployments int) error {
	switch {
	case deployments == 0:
		return errors.New("pool: New: no deployments")
	case c.allowedFails < 1:
		return fmt.Errorf("pool: New: WithCooldown allowedFails is %d, must be at least 1", c.allowedFails)
	case c.window <= 0 || c.cooldown <= 0:
		return fmt.Errorf("pool: New: WithCooldown window %v and cooldown %v must be positive", c.window, c.cooldown)
	case !(c.maxEjected > 0 && c.maxEjected <= 1):
		return fmt.Errorf("pool: New: WithMaxEjected(%v) must be more than 0 and at most 1", c.maxEjected)
	case c.deadCooldown <= 0:
		return fmt.Errorf("pool: New: WithDeadCooldown(%v) must be positive", c.deadCooldown)
	case c.maxWait < 0:
		return fmt.Errorf("pool: New: WithMaxWait(%v) must be at least 0", c.maxWait)
	}
	return nil
}

// add checks the deployments and adds them to the pool, each paced by its
// provider's rate-limit headers when its chain reads them, and each group
// of a quota shared among its members.
func (r *Runnable) add(deployments []Deployment) error {
	for i, d := range deployments {
		switch {
		case d.Runnable == nil:
			return fmt.Errorf("pool: New: deployment %d (%q) has no Runnable", i, d.Name)
		case d.Name == "":
			return fmt.Errorf("pool: New: deployment %d has no Name", i)
		case !(d.Weight >= 0) || d.Weight > 1e12:
			return fmt.Errorf("pool: New: deployment %q has weight %v, want a finite number at least 0", d.Name, d.Weight)
		case slices.ContainsFunc(r.deps, func(o *deployment) bool { return o.Name == d.Name }):
			return fmt.Errorf("pool: New: two deployments are named %q", d.Name)
		}
		if d.Weight == 0 {
			d.Weight = 1
		}
		dep := &deployment{Deployment: d, index: i, attrs: callspan.Attributes(d.Runnable)}
		if src, ok := core.Find[pace.Source](d.Runnable); ok {
			dep.pace = pace.New(src)
		}
		r.deps = append(r.deps, dep)
		r.idem = r.idem && core.IsIdempotent(d.Runnable)
	}
	groups := map[string][]*deployment{}
	for _, d := range r.deps {
		if d.Group != "" {
			groups[d.Group] = append(groups[d.Group], d)
		}
	}
	for _, d := range r.deps {
		if d.Group != "" {
			d.group = groups[d.Group]
		}
	}
	return nil
}

// counters makes the pool's metrics.
func (r *Runnable) counters(mp metric.MeterProvider) error {
	var err error
	r.cooldowns, err = version.Meter(ScopeName, mp).Int64Counter("pool.cooldowns",
		metric.WithDescription("Times a deployment was taken out of rotation."), metric.WithUnit("{cooldown}"))
	if err != nil {
		return fmt.Errorf("pool: metric pool.cooldowns: %w", err)
	}
	r.deaths, err = version.Meter(ScopeName, mp).Int64Counter("pool.dead",
		metric.WithDescription("Deployments taken out of rotation because they cannot serve (a revoked key, an exhausted quota)."), metric.WithUnit("{deployment}"))
	if err != nil {
		return fmt.Errorf("pool: metric pool.dead: %w", err)
	}
	return nil
}

// Name returns the first deployment's Name() (its Runnable's), so that a
// retry layer names the operation after the model.
func (r *Runnable) Name() string { return core.NameOf(r.deps[0].Runnable) }

// Idempotent reports true only when every deployment is idempotent.
func (r *Runnable) Idempotent() bool { return r.idem }

// CallAttributes returns the first deployment's call-span attributes (its
// model): the deployments of a pool serve one model.
func (r *Runnable) CallAttributes() []attribute.KeyValue { return r.deps[0].attrs }

// deployment is a Deployment and its state.
type deployment struct {
	Deployment
	index    int
	attrs    []attribute.KeyValue
	inflight atomic.Int64
	speed    speeds

	// until (Unix nanoseconds; 0 for never) and cooling are read on every
	// call without a lock, and written under mu.
	until   atomic.Int64 // cooling down until then
	cooling atomic.Bool  // a cooldown was reported and its return not yet
	// deadUntil (Unix nanoseconds) is when a dead deployment is back in
	// rotation (until is raised to it too), deadWhy (under mu) why it
	// died.
	deadUntil atomic.Int64
	deadWhy   string
	// pace, when the deployment reads its provider's limits from its
	// responses' headers (its RateLimits method), passes it over until their
	// reset once they leave no room.
	pace *pace.Pace
	// group is the deployments of its Group, itself included; nil when it
	// has none.
	group []*deployment

	mu           sync.Mutex
	since        time.Time // when the current window of counts began
	calls, fails int       // its calls, and own failures, in the window
	ejections    int       // ejections not yet forgiven (eject.go)
	back         time.Time // when the last ejection ends, moved on as windows forgive it
	ejected      time.Time // out as an outlier until then (zero once brought back)
	held         time.Time // out on its server's hint until then
}

// cost is the deployment's calls under way, and one more, times its
// speed of kind k (unknown when none is measured yet), per unit of weight.
func (d *deployment) cost(k speedKind, unknown float64) float64 {
	v := d.speed.of(k)
	if v == 0 {
		v = unknown
	}
	return float64(d.inflight.Load()+1) * v / d.Weight
}

// availableAt is when d can take a call, zero for now, and whether what
// keeps it out until then is its provider's headers (no room left until
// their reset) rather than a cooldown.
func (d *deployment) availableAt(now time.Time) (until time.Time, paced bool) {
	until = d.coolsUntil(now)
	if d.pace != nil {
		if w := d.pace.Wait(now, 0); w > 0 && now.Add(w).After(until) {
			return now.Add(w), true
		}
	}
	return until, false
}

// unavailableUntil is when d can take a call, zero for now.
func (d *deployment) unavailableUntil(now time.Time) time.Time {
	until, _ := d.availableAt(now)
	return until
}

// coolsUntil returns when the deployment is back from a cooldown, zero
// when it is now.
func (d *deployment) coolsUntil(now time.Time) time.Time {
	if until := d.until.Load(); until > now.UnixNano() {
		return time.Unix(0, until)
	}
	return time.Time{}
}

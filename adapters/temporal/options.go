package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
)

// DefaultHandOff is the longest wait an activity sleeps itself before a
// retry, unless WithHandOff says otherwise.
const DefaultHandOff = 10 * time.Second

// Option configures Activity, StreamActivity and NewWorkerInterceptor.
type Option func(*options)

type options struct {
	handOff   time.Duration
	heartbeat time.Duration
	advised   *sync.Once                         // the worker's log told once that the heartbeats cannot go as set
	decode    func(json.RawMessage) (any, error) // WithChunk's
	err       error                              // the first bad option
}

// WithHandOff sets the longest wait (a backoff, a server's hint, a
// budget's pace) slept in the activity before a retry: a longer one ends
// the activity attempt with an error whose NextRetryDelay is the wait, so
// that Temporal sleeps it and the worker's slot is free meanwhile. It must
// be positive; the default is DefaultHandOff.
func WithHandOff(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 && o.err == nil {
			o.err = fmt.Errorf("temporal: WithHandOff(%v): must be positive", d)
		}
		o.handOff = d
	}
}

// WithHeartbeat sets how often the activity heartbeats while a call is in
// flight. It must be positive; by default it is half the activity's
// HeartbeatTimeout, or every 5 seconds when it has none, and the default
// is what most activities want.
//
// The SDK sends a heartbeat at once and later ones at most every 80 % of
// the HeartbeatTimeout (with a worker's default options; 30 s without a
// HeartbeatTimeout, never more than 60 s): heartbeats set more often are
// held and sent together then, and a stream's checkpoint reaches the
// server as late. What makes the checkpoints reach it sooner is a shorter
// HeartbeatTimeout (or worker.Options.MaxHeartbeatThrottleInterval), not
// this option. Set at or beyond the HeartbeatTimeout, a call silent that
// long (a model before its first token) times the activity out. In either
// case the worker's log says so once, at the first activity attempt.
func WithHeartbeat(every time.Duration) Option {
	return func(o *options) {
		if every <= 0 && o.err == nil {
			o.err = fmt.Errorf("temporal: WithHeartbeat(%v): must be positive", every)
		}
		o.heartbeat = every
	}
}

// defaultHeartbeat is how often an activity with no HeartbeatTimeout
// heartbeats: its details still carry the attempts made.
const defaultHeartbeat = 5 * time.Second

func newOptions(opts []Option) options {
	o := options{handOff: DefaultHandOff, advised: new(sync.Once)}
	for _, opt := range opts {
		if opt == nil {
			if o.err == nil {
				o.err = fmt.Errorf("temporal: nil Option")
			}
			continue
		}
		opt(&o)
	}
	return o
}

// defaultThrottle is the SDK's throttle of heartbeats for an activity
// with no HeartbeatTimeout, and maxThrottle its most, with a worker's
// default options.
const (
	defaultThrottle = 30 * time.Second
	maxThrottle     = 60 * time.Second
)

// adviseOnce tells the worker's log, once, when the heartbeats set with
// WithHeartbeat cannot go as set for an activity whose HeartbeatTimeout is
// timeout.
func (o *options) adviseOnce(ctx context.Context, timeout time.Duration) {
	if o.heartbeat <= 0 {
		return
	}
	throttle := defaultThrottle
	if timeout > 0 {
		throttle = min(timeout*4/5, maxThrottle)
	}
	var advice string
	switch {
	case timeout > 0 && o.heartbeat >= timeout:
		advice = fmt.Sprintf("steadfast: WithHeartbeat(%v) is not shorter than the activity's HeartbeatTimeout (%v): a call silent that long times the activity out; leave WithHeartbeat at its default, half the HeartbeatTimeout", o.heartbeat, timeout)
	case o.heartbeat < throttle:
		advice = fmt.Sprintf("steadfast: WithHeartbeat(%v) asks for heartbeats more often than the SDK sends them (at most every %v with the worker's default options): a stream's checkpoint reaches the server up to that late; shorten the HeartbeatTimeout (or the worker's MaxHeartbeatThrottleInterval) for sooner checkpoints", o.heartbeat, throttle)
	default:
		return
	}
	o.advised.Do(func() { activity.GetLogger(ctx).Warn(advice) })
}

// every returns how often to heartbeat for an activity whose
// HeartbeatTimeout is timeout.
func (o *options) every(timeout time.Duration) time.Duration {
	switch {
	case o.heartbeat > 0:
		return o.heartbeat
	case timeout > 0:
		return timeout / 2
	}
	return defaultHeartbeat
}

// decodeChunk decodes a checkpoint's last chunk, as WithChunk says.
func (o *options) decodeChunk(raw json.RawMessage) (any, error) {
	if o.decode != nil {
		return o.decode(raw)
	}
	var v any
	err := json.Unmarshal(raw, &v)
	return v, err
}

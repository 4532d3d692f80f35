package temporal

import (
	"encoding/json"
	"fmt"
	"time"
)

// DefaultHandOff is the longest wait an activity sleeps itself before a
// retry, unless WithHandOff says otherwise.
const DefaultHandOff = 10 * time.Second

// Option configures Activity, StreamActivity and NewWorkerInterceptor.
type Option func(*options)

type options struct {
	handOff   time.Duration
	heartbeat time.Duration
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
// HeartbeatTimeout, or every 5 seconds when it has none.
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
	o := options{handOff: DefaultHandOff}
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

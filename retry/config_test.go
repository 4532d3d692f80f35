package retry

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	mnoop "go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/core"
)

func TestConfigJSONRoundTrip(t *testing.T) {
	in := RetryConfig{
		MaxRetries: 4, InitialBackoff: 500 * time.Millisecond, MaxBackoff: 20 * time.Second,
		BackoffFactor: 1.5, Jitter: 0.2, PerAttemptTimeout: 10 * time.Second,
		MaxRetryAfter: time.Minute, FirstChunkTimeout: 3 * time.Second, RetryNonIdempotent: true,
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"initial_backoff":"500ms"`) {
		t.Errorf("Marshal() = %s, want durations as strings", data)
	}
	var out RetryConfig
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("Unmarshal(%s) error = %v", data, err)
	}
	if out.MaxRetries != in.MaxRetries || out.InitialBackoff != in.InitialBackoff || out.MaxBackoff != in.MaxBackoff ||
		out.BackoffFactor != in.BackoffFactor || out.Jitter != in.Jitter || out.PerAttemptTimeout != in.PerAttemptTimeout ||
		out.MaxRetryAfter != in.MaxRetryAfter || out.FirstChunkTimeout != in.FirstChunkTimeout || out.RetryNonIdempotent != in.RetryNonIdempotent {
		t.Errorf("round trip = %+v, want %+v", out, in)
	}
}

func TestConfigJSONKeepsAbsentFields(t *testing.T) {
	c := DefaultRetryConfig()
	if err := json.Unmarshal([]byte(`{"max_retries": 1}`), &c); err != nil {
		t.Fatal(err)
	}
	want := DefaultRetryConfig()
	want.MaxRetries = 1
	if c.MaxRetries != 1 || c.InitialBackoff != want.InitialBackoff || c.Jitter != want.Jitter {
		t.Errorf("Unmarshal over defaults = %+v, want %+v", c, want)
	}
}

func TestConfigJSONErrorsNameTheField(t *testing.T) {
	for doc, field := range map[string]string{
		`{"initial_backoff": "5 parsecs"}`: "initial_backoff",
		`{"initial_backoff": 5}`:           "initial_backoff",
		`{"max_retries": "three"}`:         "max_retries",
		`{"jitter": true}`:                 "jitter",
		`{"max_retrys": 3}`:                "max_retrys",
	} {
		var c RetryConfig
		err := json.Unmarshal([]byte(doc), &c)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Unmarshal(%s) error = %v, want one naming %s", doc, err, field)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := DefaultRetryConfig()
	if err := ok.Validate(); err != nil {
		t.Fatalf("DefaultRetryConfig().Validate() = %v", err)
	}
	if err := (RetryConfig{}).Validate(); err != nil {
		t.Errorf("zero RetryConfig.Validate() = %v, want nil", err)
	}
	cases := map[string]func(*RetryConfig){
		"MaxRetries":        func(c *RetryConfig) { c.MaxRetries = -1 },
		"InitialBackoff":    func(c *RetryConfig) { c.InitialBackoff = -time.Second },
		"BackoffFactor":     func(c *RetryConfig) { c.BackoffFactor = 0.5 },
		"Jitter":            func(c *RetryConfig) { c.Jitter = math.NaN() },
		"MaxBackoff":        func(c *RetryConfig) { c.MaxBackoff = c.InitialBackoff / 2 },
		"PerAttemptTimeout": func(c *RetryConfig) { c.PerAttemptTimeout = -1 },
		"MaxRetryAfter":     func(c *RetryConfig) { c.MaxRetryAfter = -1 },
		"FirstChunkTimeout": func(c *RetryConfig) { c.FirstChunkTimeout = -1 },
	}
	for field, mutate := range cases {
		c := DefaultRetryConfig()
		mutate(&c)
		err := c.Validate()
		var ce *configError
		if !errors.As(err, &ce) || ce.Field != field {
			t.Errorf("%s: Validate() = %v, want a ConfigError for %s", field, err, field)
		}
	}
	inf := DefaultRetryConfig()
	inf.BackoffFactor = math.Inf(1)
	if inf.Validate() == nil {
		t.Error("BackoffFactor +Inf: Validate() = nil, want an error")
	}
}

func FuzzConfigJSON(f *testing.F) {
	f.Add(`{"max_retries":3,"initial_backoff":"1s","max_backoff":"30s","backoff_factor":2,"jitter":0.1}`)
	f.Add(`{"jitter":1.5}`)
	f.Add(`{"initial_backoff":"-5s"}`)
	f.Add(`{"backoff_factor":1e400}`)
	f.Add(`null`)
	f.Add(`[]`)
	f.Add(`{"max_retries":9223372036854775807}`)
	f.Fuzz(func(t *testing.T, doc string) {
		var c RetryConfig
		if err := json.Unmarshal([]byte(doc), &c); err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			var ce *configError
			if !errors.As(err, &ce) || ce.Field == "" || !strings.Contains(err.Error(), ce.Field) {
				t.Fatalf("Validate() = %v, want a ConfigError naming its field", err)
			}
			return
		}
		// A valid config survives a round trip unchanged and computes sane delays.
		data, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("Marshal(%+v) error = %v", c, err)
		}
		var again RetryConfig
		if err := json.Unmarshal(data, &again); err != nil {
			t.Fatalf("Unmarshal(Marshal()) error = %v for %s", err, data)
		}
		if again.Validate() != nil || again.MaxRetries != c.MaxRetries || again.InitialBackoff != c.InitialBackoff || again.Jitter != c.Jitter {
			t.Fatalf("round trip of %s changed %+v into %+v", data, c, again)
		}
		for _, n := range []int{1, 2, 64, 1e9} {
			if d := c.backoff(n, 0.5); d < 0 || d > c.MaxBackoff {
				t.Fatalf("backoff(%d) = %v outside [0, %v]", n, d, c.MaxBackoff)
			}
		}
	})
}

// MaxRetries + 1 attempts must fit AttemptInfo.MaxAttempts.
func TestValidateMaxRetriesRepresentable(t *testing.T) {
	c := RetryConfig{MaxRetries: math.MaxInt32}
	var ce *configError
	if err := c.Validate(); !errors.As(err, &ce) || ce.Field != "MaxRetries" {
		t.Errorf("MaxRetries = MaxInt32: Validate() = %v, want a ConfigError for MaxRetries", err)
	}
	c.MaxRetries = math.MaxInt32 - 1
	if err := c.Validate(); err != nil {
		t.Fatalf("MaxRetries = MaxInt32-1: Validate() = %v, want nil", err)
	}
	r := NewRetryRunnable(core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		info, _ := AttemptFromContext(ctx)
		return info.MaxAttempts, nil
	}), c, WithTracerProvider(tnoop.NewTracerProvider()), WithMeterProvider(mnoop.NewMeterProvider()))
	if got, err := r.Invoke(t.Context(), "q"); err != nil || got != math.MaxInt32 {
		t.Errorf("AttemptInfo.MaxAttempts = %v, %v, want %d", got, err, math.MaxInt32)
	}
}

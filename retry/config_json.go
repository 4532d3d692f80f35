package retry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// configField describes one JSON field of RetryConfig.
type configField struct {
	json, goName string
	ptr          func(c *RetryConfig) any // *int, *float64, *bool, *string or *time.Duration
}

// configFields lists the JSON form of RetryConfig, in the order written.
// RetryableErrors, RetryIf, CheckOutput, NextInput, Repair and RepairOutput hold code,
// not data, and are not in it.
var configFields = []configField{
	{"max_retries", "MaxRetries", func(c *RetryConfig) any { return &c.MaxRetries }},
	{"initial_backoff", "InitialBackoff", func(c *RetryConfig) any { return &c.InitialBackoff }},
	{"max_backoff", "MaxBackoff", func(c *RetryConfig) any { return &c.MaxBackoff }},
	{"backoff_factor", "BackoffFactor", func(c *RetryConfig) any { return &c.BackoffFactor }},
	{"jitter", "Jitter", func(c *RetryConfig) any { return &c.Jitter }},
	{"per_attempt_timeout", "PerAttemptTimeout", func(c *RetryConfig) any { return &c.PerAttemptTimeout }},
	{"max_retry_after", "MaxRetryAfter", func(c *RetryConfig) any { return &c.MaxRetryAfter }},
	{"first_chunk_timeout", "FirstChunkTimeout", func(c *RetryConfig) any { return &c.FirstChunkTimeout }},
	{"chunk_timeout", "ChunkTimeout", func(c *RetryConfig) any { return &c.ChunkTimeout }},
	{"resume_streams", "ResumeStreams", func(c *RetryConfig) any { return &c.ResumeStreams }},
	{"restart_streams", "RestartStreams", func(c *RetryConfig) any { return &c.RestartStreams }},
	{"retry_non_idempotent", "RetryNonIdempotent", func(c *RetryConfig) any { return &c.RetryNonIdempotent }},
	{"nested", "Nested", func(c *RetryConfig) any { return &c.Nested }},
	{"max_retries_by_class", "MaxRetriesByClass", func(c *RetryConfig) any { return &c.MaxRetriesByClass }},
	{"max_repairs", "MaxRepairs", func(c *RetryConfig) any { return &c.MaxRepairs }},
	{"max_output_repairs", "MaxOutputRepairs", func(c *RetryConfig) any { return &c.MaxOutputRepairs }},
	{"max_retry_tokens", "MaxRetryTokens", func(c *RetryConfig) any { return &c.MaxRetryTokens }},
}

func jsonName(goName string) string {
	for _, f := range configFields {
		if f.goName == goName {
			return f.json
		}
	}
	return ""
}

// MarshalJSON writes every data field, zero values too (max_repairs 0
// says no repair), durations as Go duration strings ("1.5s"), and
// MaxRetriesByClass only when it has entries. RetryableErrors and the
// functions (RetryIf, CheckOutput, NextInput, Repair, RepairOutput) are
// not written.
func (c RetryConfig) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, f := range configFields {
		var v any
		switch p := f.ptr(&c).(type) {
		case *time.Duration:
			v = p.String()
		case *map[Class]int:
			if len(*p) == 0 {
				continue // none: the field is left out, as in a policy file
			}
			v = p
		default:
			v = p
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		val, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("retry: RetryConfig.%s: %w", f.goName, err)
		}
		fmt.Fprintf(&b, "%q:%s", f.json, val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the fields present in data over the receiver's current
// values, so fields left out keep them. Durations are Go duration strings
// ("500ms", "2s"). An unknown field, a value of the wrong type or a bad
// duration is an error that names the field. It does not call Validate.
func (c *RetryConfig) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("retry: RetryConfig: %w", err)
	}
	if raw == nil {
		return fmt.Errorf("retry: RetryConfig: want a JSON object, got null")
	}
	next := *c
	for name, val := range raw {
		f, ok := lookupField(name)
		if !ok {
			return &configError{Field: name, Reason: "is not a field of RetryConfig"}
		}
		if err := f.decode(&next, val); err != nil {
			return &configError{Field: f.goName, Reason: err.Error()}
		}
	}
	*c = next
	return nil
}

func lookupField(name string) (configField, bool) {
	for _, f := range configFields {
		if f.json == name {
			return f, true
		}
	}
	return configField{}, false
}

func (f configField) decode(c *RetryConfig, val json.RawMessage) error {
	if string(bytes.TrimSpace(val)) == "null" {
		// encoding/json would leave the field as it was: a silent default.
		return errors.New("is null: give a value or leave the field out")
	}
	switch p := f.ptr(c).(type) {
	case *time.Duration:
		var s string
		if err := json.Unmarshal(val, &s); err != nil {
			return fmt.Errorf("wants a duration string such as \"500ms\", got %s", val)
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("has a bad duration %q: want a Go duration such as \"500ms\"", s)
		}
		*p = d
		return nil
	case *map[Class]int:
		// A fresh map: decoding into the one the value was copied from
		// would change the policy it came from (a "default" entry).
		m := map[Class]int{}
		if err := json.Unmarshal(val, &m); err != nil {
			return fmt.Errorf("wants an object of class names and numbers such as {\"rate_limit\": 5}, got %s", val)
		}
		*p = m
		return nil
	default:
		dec := json.NewDecoder(bytes.NewReader(val))
		if err := dec.Decode(p); err != nil {
			return fmt.Errorf("has a bad value %s: %v", val, err)
		}
		return nil
	}
}

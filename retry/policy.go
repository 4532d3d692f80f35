package retry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// defaultPolicy is the key of the policy file's entry for calls whose
// operation has no entry of its own.
const defaultPolicy = "default"

// Policies are per-operation retry policies, usually read from a JSON
// file (os.ReadFile, then ParsePolicies):
//
//	{
//	  "default":   {"max_retries": 2, "initial_backoff": "200ms", "max_backoff": "5s", "jitter": 0.2},
//	  "llm.chat":  {"max_retries": 4, "initial_backoff": "1s", "max_backoff": "30s"},
//	  "retriever": {"max_retries": 1, "initial_backoff": "50ms"},
//	  "send_email": {"max_retries": 0}
//	}
//
// Fields left out of "default" keep DefaultRetryConfig's values; fields
// left out of an operation's entry keep the "default" entry's values.
type Policies struct {
	// Default is the policy of calls whose operation has no entry.
	Default RetryConfig
	// Operations maps operation names to their policies.
	Operations map[string]RetryConfig
}

// Options returns a WithOperationConfig option for each operation, to pass
// to New with p.Default.
func (p Policies) Options() []Option {
	ops := make([]string, 0, len(p.Operations))
	for op := range p.Operations {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	opts := make([]Option, 0, len(ops))
	for _, op := range ops {
		opts = append(opts, WithOperationConfig(op, p.Operations[op]))
	}
	return opts
}

// ParsePolicies parses a policy document: a JSON object mapping operation
// names to RetryConfig objects, with a "default" entry. Every policy is
// validated. A missing "default", an unknown field, a bad duration or an
// invalid value is an error naming the operation and the field.
func ParsePolicies(data []byte) (Policies, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return Policies{}, fmt.Errorf("retry: policies: want a JSON object of operation names to policies: %w", err)
	}
	if dec.More() {
		return Policies{}, errors.New("retry: policies: data after the JSON object")
	}
	def, ok := raw[defaultPolicy]
	if !ok {
		return Policies{}, fmt.Errorf("retry: policies: no %q entry", defaultPolicy)
	}
	p := Policies{Default: DefaultRetryConfig(), Operations: make(map[string]RetryConfig, len(raw)-1)}
	if err := parsePolicy(defaultPolicy, def, &p.Default); err != nil {
		return Policies{}, err
	}
	for op, doc := range raw {
		if op == defaultPolicy {
			continue
		}
		cfg := p.Default
		if err := parsePolicy(op, doc, &cfg); err != nil {
			return Policies{}, err
		}
		p.Operations[op] = cfg
	}
	return p, nil
}

// parsePolicy reads doc over cfg and validates the result, naming op in
// any error.
func parsePolicy(op string, doc json.RawMessage, cfg *RetryConfig) error {
	err := json.Unmarshal(doc, cfg)
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil {
		return nil
	}
	if ce, ok := errors.AsType[*ConfigError](err); ok {
		ce.Operation = op
		return ce
	}
	return fmt.Errorf("retry: policy %q: %w", op, err)
}

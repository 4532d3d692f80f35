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

// ParsePolicies parses a policy document, usually read from a JSON file:
// a JSON object mapping operation names to RetryConfig objects, with a
// "default" entry for calls whose operation has no entry of its own.
//
//	{
//	  "default":   {"max_retries": 2, "initial_backoff": "200ms", "max_backoff": "5s", "jitter": 0.2},
//	  "llm.chat":  {"max_retries": 4, "initial_backoff": "1s", "max_backoff": "30s"},
//	  "retriever": {"max_retries": 1, "initial_backoff": "50ms"},
//	  "send_email": {"max_retries": 0}
//	}
//
// Fields left out of "default" keep DefaultRetryConfig's values; fields
// left out of an operation's entry keep the "default" entry's values. It
// returns the default policy, to pass to New, and a WithOperationConfig
// option for each other operation, in the order of their names:
//
//	cfg, opts, err := retry.ParsePolicies(data)
//	r, err := retry.New(agent, cfg, opts...)
//
// Every policy is validated. A missing "default", an unknown field, a bad
// duration or an invalid value is an error naming the operation and the
// field.
func ParsePolicies(data []byte) (RetryConfig, []Option, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return RetryConfig{}, nil, fmt.Errorf("retry: policies: want a JSON object of operation names to policies: %w", err)
	}
	if dec.More() {
		return RetryConfig{}, nil, errors.New("retry: policies: data after the JSON object")
	}
	doc, ok := raw[defaultPolicy]
	if !ok {
		return RetryConfig{}, nil, fmt.Errorf("retry: policies: no %q entry", defaultPolicy)
	}
	def := DefaultRetryConfig()
	if err := parsePolicy(defaultPolicy, doc, &def); err != nil {
		return RetryConfig{}, nil, err
	}
	ops := make([]string, 0, len(raw)-1)
	for op := range raw {
		if op != defaultPolicy {
			ops = append(ops, op)
		}
	}
	slices.Sort(ops)
	opts := make([]Option, 0, len(ops))
	for _, op := range ops {
		cfg := def
		if err := parsePolicy(op, raw[op], &cfg); err != nil {
			return RetryConfig{}, nil, err
		}
		opts = append(opts, WithOperationConfig(op, cfg))
	}
	return def, opts, nil
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
	if ce, ok := errors.AsType[*configError](err); ok {
		ce.Operation = op
		return ce
	}
	return fmt.Errorf("retry: policy %q: %w", op, err)
}

package retry_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

const policyDoc = `{
  "default":   {"max_retries": 2, "initial_backoff": "200ms", "max_backoff": "5s"},
  "llm.chat":  {"max_retries": 4, "initial_backoff": "1s", "max_backoff": "30s"},
  "retriever": {"max_retries": 1},
  "send_email": {"max_retries": 0}
}`

func TestParsePolicies(t *testing.T) {
	def, opts, err := retry.ParsePolicies([]byte(policyDoc))
	if err != nil {
		t.Fatal(err)
	}
	if def.MaxRetries != 2 || def.InitialBackoff != 200*time.Millisecond || def.Jitter != 0.1 {
		t.Errorf("default = %+v, want the file's fields over DefaultRetryConfig", def)
	}
	ops := retry.OperationConfigs(opts...)
	llm := ops["llm.chat"]
	if llm.MaxRetries != 4 || llm.InitialBackoff != time.Second || llm.MaxBackoff != 30*time.Second {
		t.Errorf("llm.chat = %+v", llm)
	}
	// Fields left out of an operation come from "default".
	if r := ops["retriever"]; r.MaxRetries != 1 || r.InitialBackoff != 200*time.Millisecond || r.MaxBackoff != 5*time.Second {
		t.Errorf("retriever = %+v, want default's backoffs", r)
	}
	if len(opts) != 3 || len(ops) != 3 {
		t.Errorf("ParsePolicies: %d options for %d operations, want 3 for 3", len(opts), len(ops))
	}
}

func TestParsePoliciesErrorsNameOperationAndField(t *testing.T) {
	for doc, want := range map[string][]string{
		`{"llm": {"max_retries": 1}}`:                                 {`"default"`},
		`{"default": {}, "llm": {"initial_backoff": "soon"}}`:         {`"llm"`, "initial_backoff"},
		`{"default": {}, "llm": {"max_retrys": 3}}`:                   {`"llm"`, "max_retrys"},
		`{"default": {}, "tool": {"jitter": 3}}`:                      {`"tool"`, "Jitter"},
		`{"default": {"initial_backoff": "1m", "max_backoff": "1s"}}`: {`"default"`, "MaxBackoff"},
		`{"default": {}, "llm": {"max_retries": -1}}`:                 {`"llm"`, "MaxRetries"},
		`{"default": {}, "llm": []}`:                                  {`"llm"`},
		`[1, 2]`:                                                      {"JSON object"},
		`{"default": {}} {"more": 1}`:                                 {"after the JSON object"},
	} {
		_, _, err := retry.ParsePolicies([]byte(doc))
		if err == nil {
			t.Errorf("ParsePolicies(%s) error = nil", doc)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("ParsePolicies(%s) error = %q, want it to name %s", doc, err, w)
			}
		}
	}
}

// The operation is, in order: WithOperation on the call, the inner
// Runnable's Name(), else the default policy.
func TestPerOperationPolicySelection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		def, policies, err := retry.ParsePolicies([]byte(policyDoc))
		if err != nil {
			t.Fatal(err)
		}
		attemptsOf := func(inner core.Runnable, opts ...core.Option) (int, string) {
			r := newRetry(t, inner, def, policies...)
			_, err := r.Invoke(t.Context(), "q", opts...)
			re, ok := errors.AsType[*retry.Error](err)
			if !ok || re.Outcome != retry.OutcomeExhausted {
				t.Fatalf("Invoke() error = %v, want exhausted", err)
			}
			return re.Attempts, re.Operation
		}
		fail := mock.New(mock.Fail(errTransient))
		if n, op := attemptsOf(fail, core.WithOperation("llm.chat")); n != 5 || op != "llm.chat" {
			t.Errorf("WithOperation(llm.chat): attempts, operation = %d, %q, want 5, llm.chat", n, op)
		}
		if n, op := attemptsOf(mock.Named("retriever", fail)); n != 2 || op != "retriever" {
			t.Errorf("Name() retriever: attempts, operation = %d, %q, want 2, retriever", n, op)
		}
		if n, op := attemptsOf(mock.Named("retriever", fail), core.WithOperation("send_email")); n != 1 || op != "send_email" {
			t.Errorf("WithOperation over Name(): attempts, operation = %d, %q, want 1, send_email", n, op)
		}
		if n, op := attemptsOf(fail, core.WithOperation("unknown")); n != 3 || op != "unknown" {
			t.Errorf("unknown operation: attempts, operation = %d, %q, want 3 (default), unknown", n, op)
		}
		if n, op := attemptsOf(fail); n != 3 || op != "" {
			t.Errorf("no operation: attempts, operation = %d, %q, want 3, \"\"", n, op)
		}
	})
}

// A null is neither a value nor an absent field: it is an error naming
// the operation and the field, for every field alike.
func TestParsePoliciesRejectsNull(t *testing.T) {
	for _, field := range []string{"max_retries", "jitter", "backoff_factor", "retry_non_idempotent", "initial_backoff"} {
		for _, op := range []string{"default", "llm"} {
			doc := fmt.Sprintf(`{"default": {}, %q: {%q: null}}`, op, field)
			if op == "default" {
				doc = fmt.Sprintf(`{"default": {%q: null}}`, field)
			}
			_, _, err := retry.ParsePolicies([]byte(doc))
			ce, ok := errors.AsType[*retry.ConfigError](err)
			if !ok || ce.Operation != op || !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), "null") {
				t.Errorf("ParsePolicies(%s) error = %v, want a ConfigError naming %q, %s and null", doc, err, op, field)
			}
		}
	}
}

package retry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// failuresOfEachClass are failures of each class, as ClassOf reads them.
var failuresOfEachClass = map[retry.Class]error{
	retry.ClassRateLimit:  &mock.HTTPError{Code: 429},
	retry.ClassOverloaded: &mock.HTTPError{Code: 529},
	retry.ClassServer:     &mock.HTTPError{Code: 502},
	retry.ClassTimeout:    fmt.Errorf("read: %w", timeoutError{}),
	retry.ClassConnection: fmt.Errorf("reading the answer: %w", io.ErrUnexpectedEOF),
	retry.ClassOther:      errors.New("something else"),
}

func TestClassOf(t *testing.T) {
	for want, err := range failuresOfEachClass {
		if got := retry.ClassOf(err); got != want {
			t.Errorf("ClassOf(%v) = %q, want %q", err, got, want)
		}
	}
	for code, want := range map[int]retry.Class{503: retry.ClassOverloaded, 500: retry.ClassServer, 504: retry.ClassTimeout, 408: retry.ClassTimeout, 400: retry.ClassOther} {
		if got := retry.ClassOf(&mock.HTTPError{Code: code}); got != want {
			t.Errorf("ClassOf(%d) = %q, want %q", code, got, want)
		}
	}
}

// Each class at its bound: a call that keeps failing with one class makes
// that class's bound of retries, not MaxRetries, and its error names the
// bound that ended it.
func TestMaxRetriesByClassEndsTheCallAtTheBound(t *testing.T) {
	for class, failure := range failuresOfEachClass {
		synctest.Test(t, func(t *testing.T) {
			calls := 0
			inner := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
				calls++
				return nil, failure
			})
			cfg := retry.RetryConfig{MaxRetries: 5, InitialBackoff: time.Second, MaxBackoff: time.Second,
				MaxRetriesByClass: map[retry.Class]int{class: 2}}
			r, err := retry.New(inner, cfg, quiet...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Invoke(t.Context(), "q")
			re, ok := errors.AsType[*retry.Error](err)
			if !ok || calls != 3 || re.Outcome != retry.OutcomeExhausted || re.Class != class || re.Attempts != 3 {
				t.Fatalf("%s: %d calls, %v; want 3 (2 retries), exhausted by the %s bound", class, calls, err, class)
			}
			if want := "MaxRetriesByClass[" + string(class) + "]"; !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not name %s", class, err, want)
			}
		})
	}
}

// A class without a bound is bounded by MaxRetries alone, and retries of
// other classes do not count against a bound.
func TestMaxRetriesByClassCountsEachClassApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		script := []error{&mock.HTTPError{Code: 429}, &mock.HTTPError{Code: 503}, &mock.HTTPError{Code: 503}, &mock.HTTPError{Code: 429}, &mock.HTTPError{Code: 429}}
		calls := 0
		inner := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
			calls++
			return nil, script[calls-1]
		})
		cfg := retry.RetryConfig{MaxRetries: 10, InitialBackoff: time.Second, MaxBackoff: time.Second,
			MaxRetriesByClass: map[retry.Class]int{retry.ClassRateLimit: 1}}
		r, err := retry.New(inner, cfg, quiet...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Invoke(t.Context(), "q")
		re, ok := errors.AsType[*retry.Error](err)
		if !ok || calls != 4 || re.Class != retry.ClassRateLimit {
			t.Errorf("%d calls, %v; want 4: 429 retried once, 503 twice, then the second 429 ends it", calls, err)
		}

		// Without a bound that is met, the call ends as before.
		calls = 0
		cfg.MaxRetriesByClass = map[retry.Class]int{retry.ClassTimeout: 0}
		cfg.MaxRetries = 2
		r, _ = retry.New(inner, cfg, quiet...)
		_, err = r.Invoke(t.Context(), "q")
		if re, ok := errors.AsType[*retry.Error](err); !ok || calls != 3 || re.Class != "" || strings.Contains(err.Error(), "MaxRetriesByClass") {
			t.Errorf("%d calls, %v; want 3, exhausted by MaxRetries", calls, err)
		}
	})
}

// In a Batch each item counts its own retries by class.
func TestMaxRetriesByClassPerBatchItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := map[any]int{}
		inner := core.RunnableFunc(func(_ context.Context, in any, _ ...core.Option) (any, error) {
			sent[in]++
			if in == "limited" {
				return nil, &mock.HTTPError{Code: 429}
			}
			if sent[in] < 4 {
				return nil, &mock.HTTPError{Code: 500}
			}
			return "ok", nil
		})
		cfg := retry.RetryConfig{MaxRetries: 5, InitialBackoff: time.Second, MaxBackoff: time.Second,
			MaxRetriesByClass: map[retry.Class]int{retry.ClassRateLimit: 1}}
		r, err := retry.New(core.RunnableFunc(inner), cfg, quiet...)
		if err != nil {
			t.Fatal(err)
		}
		outs, err := r.Batch(t.Context(), []any{"limited", "flaky"}, core.WithMaxConcurrency(1))
		be, ok := errors.AsType[*core.BatchError](err)
		if !ok || outs[1] != "ok" || sent["limited"] != 2 || sent["flaky"] != 4 {
			t.Fatalf("Batch = %v, %v; sent %v; want the limited item sent twice, the flaky one four times and ok", outs, err, sent)
		}
		if re, ok := errors.AsType[*retry.Error](be.Errs[0]); !ok || re.Class != retry.ClassRateLimit {
			t.Errorf("item 0's error = %v, want exhausted by the rate_limit bound", be.Errs[0])
		}
	})
}

func TestMaxRetriesByClassInJSON(t *testing.T) {
	var cfg retry.RetryConfig
	if err := json.Unmarshal([]byte(`{"max_retries": 6, "max_retries_by_class": {"rate_limit": 5, "timeout": 1}}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.MaxRetriesByClass[retry.ClassRateLimit] != 5 || cfg.MaxRetriesByClass[retry.ClassTimeout] != 1 || cfg.Validate() != nil {
		t.Fatalf("parsed %v, want rate_limit 5, timeout 1, valid", cfg.MaxRetriesByClass)
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var back retry.RetryConfig
	if err := json.Unmarshal(data, &back); err != nil || back.MaxRetriesByClass[retry.ClassRateLimit] != 5 || len(back.MaxRetriesByClass) != 2 {
		t.Errorf("round trip of %s = %v, %v", data, back.MaxRetriesByClass, err)
	}
	if data, _ := json.Marshal(retry.DefaultRetryConfig()); strings.Contains(string(data), "max_retries_by_class") {
		t.Errorf("a config without class bounds writes %s, want the field left out", data)
	}

	for doc, want := range map[string]string{
		`{"max_retries_by_class": {"rate-limit": 5}}`: `unknown class "rate-limit"`,
		`{"max_retries_by_class": {"timeout": -1}}`:   "must not be negative",
		`{"max_retries_by_class": [5]}`:               "wants an object",
		`{"max_retries_by_class": null}`:              "is null",
	} {
		var c retry.RetryConfig
		err := json.Unmarshal([]byte(doc), &c)
		if err == nil {
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "MaxRetriesByClass") {
			t.Errorf("%s: error %v, want one naming MaxRetriesByClass that says %q", doc, err, want)
		}
	}

	// A policy file's operations get their own map: an entry that sets
	// bounds does not change the default's.
	def, opts, err := retry.ParsePolicies([]byte(`{"default": {"max_retries_by_class": {"rate_limit": 1}},
		"llm.chat": {"max_retries_by_class": {"rate_limit": 4}}}`))
	if err != nil {
		t.Fatal(err)
	}
	llm := retry.OperationConfigs(opts...)["llm.chat"]
	if def.MaxRetriesByClass[retry.ClassRateLimit] != 1 || llm.MaxRetriesByClass[retry.ClassRateLimit] != 4 {
		t.Errorf("default %v, llm.chat %v; want 1 and 4", def.MaxRetriesByClass, llm.MaxRetriesByClass)
	}
}

package retry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// flaky fails its first n calls with a 503.
func flaky(n int) core.RunnableFunc {
	calls := 0
	return func(context.Context, any, ...core.Option) (any, error) {
		calls++
		if calls <= n {
			return nil, unavailable{}
		}
		return fmt.Sprintf("ok after %d calls", calls), nil
	}
}

type unavailable struct{}

func (unavailable) Error() string   { return "service unavailable" }
func (unavailable) StatusCode() int { return 503 }

// The examples use nanosecond backoffs so that they run instantly; real
// code starts from retry.DefaultRetryConfig().

func ExampleNew() {
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Nanosecond, MaxBackoff: 10 * time.Nanosecond}
	llm, err := retry.New(flaky(2), cfg)
	if err != nil {
		panic(err)
	}
	out, err := llm.Invoke(context.Background(), "Summarise this article")
	fmt.Println(out, err)
	// Output: ok after 3 calls <nil>
}

func ExampleNewRetryRunnable() {
	cfg := retry.RetryConfig{MaxRetries: 1, InitialBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond}
	llm := retry.NewRetryRunnable(flaky(5), cfg)
	_, err := llm.Invoke(context.Background(), "q", core.WithOperation("llm.chat"))
	if re, ok := errors.AsType[*retry.Error](err); ok {
		fmt.Println(re.Outcome, re.Attempts)
	}
	fmt.Println(err)
	// Output:
	// exhausted 2
	// retry: llm.chat: exhausted after 2 attempts: service unavailable
}

func ExampleMiddleware() {
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond}
	r := core.Chain(flaky(1), retry.Middleware(cfg))
	out, _ := r.Invoke(context.Background(), "q")
	fmt.Println(out)
	// Output: ok after 2 calls
}

func ExamplePermanent() {
	calls := 0
	validate := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
		calls++
		return nil, retry.Permanent(errors.New("prompt is empty"))
	})
	r := retry.NewRetryRunnable(validate, retry.DefaultRetryConfig())
	_, err := r.Invoke(context.Background(), "")
	fmt.Println(calls, err)
	// Output: 1 retry: not_retryable after 1 attempts: prompt is empty
}

func ExampleAttemptFromContext() {
	tool := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		info, _ := retry.AttemptFromContext(ctx)
		if info.Attempt == 1 {
			return nil, errors.New("connection reset")
		}
		// info.InvocationID is the same on every attempt: use it as the
		// idempotency key of the side effect.
		return fmt.Sprintf("attempt %d of %d", info.Attempt, info.MaxAttempts), nil
	})
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond}
	out, _ := retry.NewRetryRunnable(tool, cfg).Invoke(context.Background(), nil)
	fmt.Println(out)
	// Output: attempt 2 of 3
}

func ExampleWithOnRetry() {
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Nanosecond, MaxBackoff: 4 * time.Nanosecond}
	r := retry.NewRetryRunnable(flaky(2), cfg,
		retry.WithOnRetry(func(_ context.Context, ev retry.RetryEvent) {
			fmt.Printf("attempt %d failed (%v), next in %v\n", ev.Attempt, ev.Err, ev.Delay)
		}))
	_, _ = r.Invoke(context.Background(), "q")
	// Output:
	// attempt 1 failed (service unavailable), next in 1ns
	// attempt 2 failed (service unavailable), next in 2ns
}

func ExampleRetryConfig_UnmarshalJSON() {
	cfg := retry.DefaultRetryConfig()
	err := json.Unmarshal([]byte(`{"max_retries": 4, "initial_backoff": "250ms", "jitter": 0.5}`), &cfg)
	if err == nil {
		err = cfg.Validate()
	}
	fmt.Println(cfg.MaxRetries, cfg.InitialBackoff, cfg.MaxBackoff, cfg.Jitter, err)

	err = json.Unmarshal([]byte(`{"max_backoff": "forever"}`), &cfg)
	fmt.Println(err)
	// Output:
	// 4 250ms 30s 0.5 <nil>
	// retry: RetryConfig.MaxBackoff ("max_backoff") has a bad duration "forever": want a Go duration such as "500ms"
}

func ExampleRetryConfig_Validate() {
	cfg := retry.DefaultRetryConfig()
	cfg.Jitter = 1.5
	fmt.Println(cfg.Validate())
	// Output: retry: RetryConfig.Jitter ("jitter") is 1.5, must be within [0, 1]
}

func ExampleParsePolicies() {
	cfg, opts, err := retry.ParsePolicies([]byte(`{
		"default":   {"max_retries": 2, "initial_backoff": "100ms", "max_backoff": "2s"},
		"llm.chat":  {"max_retries": 4, "initial_backoff": "1s", "max_backoff": "30s"},
		"send_email": {"max_retries": 0}
	}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.MaxRetries, len(opts))
	r := retry.NewRetryRunnable(flaky(0), cfg, opts...)
	out, _ := r.Invoke(context.Background(), "q", core.WithOperation("llm.chat"))
	fmt.Println(out)

	_, _, err = retry.ParsePolicies([]byte(`{"default": {}, "llm.chat": {"jitter": 2}}`))
	fmt.Println(err)
	// Output:
	// 2 2
	// ok after 1 calls
	// retry: policy "llm.chat": Jitter ("jitter") is 2, must be within [0, 1]
}

func ExampleNewTokenBudget() {
	// One budget for every RetryRunnable that calls the same provider.
	budget := retry.NewTokenBudget(300, 2)
	cfg := retry.RetryConfig{MaxRetries: 3}
	down := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
		return nil, unavailable{}
	})
	r := retry.NewRetryRunnable(down, cfg, retry.WithBudget(budget))
	outcomes := map[retry.Outcome]int{}
	for range 100 {
		_, err := r.Invoke(context.Background(), "q")
		var re *retry.Error
		errors.As(err, &re)
		outcomes[re.Outcome]++
	}
	// During an outage the first 37 calls retry until failures have spent
	// half of the 300 tokens; after that every call makes a single attempt.
	fmt.Println(outcomes)
	// Output: map[budget_exhausted:63 exhausted:37]
}

func ExampleRecommendedBudget() {
	// One budget for every RetryRunnable that calls the same provider.
	budget := retry.RecommendedBudget()
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond}
	llm := retry.NewRetryRunnable(flaky(1), cfg, retry.WithBudget(budget))
	out, err := llm.Invoke(context.Background(), "q")
	fmt.Println(out, err)
	// Output: ok after 2 calls <nil>
}

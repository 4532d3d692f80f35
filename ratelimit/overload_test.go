package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// The limit reads an overload as retry classifies one, whatever carries
// it: a status, a provider's code in an error event with no status, a
// wrapped error; a plain error, a 500 and a 400 never cut it.
func TestOverloadIsRetrysClassification(t *testing.T) {
	cases := []struct {
		name string
		err  error
		cuts bool
	}{
		{"a 429", &mock.HTTPError{Code: 429}, true},
		{"a 529", &mock.HTTPError{Code: 529}, true},
		{"an llmhttp.APIError 503", &llmhttp.APIError{Status: 503, Err: errors.New("unavailable")}, true},
		{"an error event overloaded_error, no status", &llmhttp.APIError{Code: "overloaded_error", Err: errors.New("Overloaded")}, true},
		{"an error event rate_limit_exceeded, no status", &llmhttp.APIError{Code: "rate_limit_exceeded", Err: errors.New("slow down")}, true},
		{"an error event server_is_overloaded, wrapped", fmt.Errorf("stream: %w", &llmhttp.APIError{Code: "server_is_overloaded", Err: errors.New("busy")}), true},
		{"a plain error", errors.New("provider: too many requests"), false},
		{"a 500", &mock.HTTPError{Code: 500}, false},
		{"a 400", &mock.HTTPError{Code: 400}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			class := retry.ClassOf(c.err)
			if overload := class == retry.ClassRateLimit || class == retry.ClassOverloaded; overload != c.cuts {
				t.Fatalf("retry.ClassOf = %s; the case says overload %v", class, c.cuts)
			}
			inner := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return nil, c.err })
			r, err := ratelimit.NewConcurrency(inner, ratelimit.ConcurrencyConfig{Initial: 10})
			if err != nil {
				t.Fatal(err)
			}
			_, _ = r.Invoke(t.Context(), "q")
			if cut := r.Limit() < 10; cut != c.cuts {
				t.Errorf("limit %d after %v, want cut %v", r.Limit(), c.err, c.cuts)
			}
		})
	}
}

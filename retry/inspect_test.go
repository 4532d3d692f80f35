package retry_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

func TestInspect(t *testing.T) {
	for _, tc := range []struct {
		err       error
		typ       string
		retryable bool
		hint      time.Duration
	}{
		{&mock.HTTPError{Code: 429, After: 3 * time.Second}, "429", true, 3 * time.Second},
		{&mock.HTTPError{Code: 503}, "503", true, 0},
		{&mock.HTTPError{Code: 400}, "400", false, 0},
		{retry.Permanent(&mock.HTTPError{Code: 503}), "503", false, 0},
		{fmt.Errorf("wrapped: %w", &mock.HTTPError{Code: 401}), "401", false, 0},
		{errors.New("connection reset"), "*errors.errorString", true, 0},
	} {
		hint, _ := retry.ServerHint(tc.err)
		if got, ok := retry.ErrorType(tc.err), retry.IsRetryable(tc.err); got != tc.typ || ok != tc.retryable || hint != tc.hint {
			t.Errorf("%v: ErrorType %q, IsRetryable %v, ServerHint %v; want %q, %v, %v", tc.err, got, ok, hint, tc.typ, tc.retryable, tc.hint)
		}
	}
	if retry.IsRetryable(nil) {
		t.Error("IsRetryable(nil) = true")
	}
}

// An integration that hands failures to another system (a workflow
// engine, a dead letter) names and sorts them as the retry layer does.
func ExampleIsRetryable() {
	err := fmt.Errorf("summarise: %w", &mock.HTTPError{Code: 429, After: 2 * time.Second})
	hint, _ := retry.ServerHint(err)
	fmt.Println(retry.ErrorType(err), retry.IsRetryable(err), hint, retry.ClassOf(err))
	// Output: 429 true 2s rate_limit
}

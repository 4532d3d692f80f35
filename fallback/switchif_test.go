package fallback_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"
)

// The rule of WithSwitchIf is asked about failures that happened, and
// nothing else: not at construction, not for the last candidate; a
// silent first candidate stops at its first silent attempt, and the rule
// is asked about that one.
func TestSwitchIfIsAskedOnlyAboutFailuresThatHappened(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var asked []error
		rule := fallback.WithSwitchIf(func(err error) bool {
			asked = append(asked, err)
			return true
		})
		silent := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
			<-ctx.Done() // sends nothing
			return nil, ctx.Err()
		})
		cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond,
			PerAttemptTimeout: time.Second}
		first, err := retry.New(silent, cfg, retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		f := newFallback(t, []core.Runnable{first, mock.New(mock.OK("second"))}, rule)
		if len(asked) != 0 {
			t.Fatalf("the rule was asked %d times at construction: %v", len(asked), asked)
		}
		out, err := f.Invoke(t.Context(), "q")
		if err != nil || out != "second" {
			t.Fatalf("Invoke() = %v, %v; want the second candidate's answer", out, err)
		}
		if len(asked) != 1 {
			t.Fatalf("the rule was asked %d times, want once, about the silent candidate's failure: %v", len(asked), asked)
		}
		re, ok := errors.AsType[*retry.Error](asked[0])
		if !ok || re.Outcome != retry.OutcomeSilentTimeout || re.Attempts != 1 {
			t.Errorf("asked about %v, want the first candidate's silent_timeout after one attempt", asked[0])
		}
	})
}

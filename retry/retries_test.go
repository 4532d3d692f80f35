package retry_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

// AttemptInfo.Retries counts the sends before an attempt, whatever layer
// made them: 0, 1, 2 on one layer's attempts 1 to 3, and the same through
// a layer nested inside another (Nested "once" makes one attempt each
// time; its own count would say 0 every time).
func TestRetriesCountEveryLayersSends(t *testing.T) {
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Second}
	for _, nested := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var seen []int
			provider := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
				info, _ := retry.AttemptFromContext(ctx)
				seen = append(seen, info.Retries)
				return nil, &mock.HTTPError{Code: 503}
			})
			var r core.Runnable = newRetry(t, provider, cfg)
			if nested {
				r = newRetry(t, r, cfg)
			}
			_, _ = r.Invoke(t.Context(), "q")
			if !slices.Equal(seen, []int{0, 1, 2}) {
				t.Errorf("nested %v: Retries %v, want [0 1 2]", nested, seen)
			}
		})
	}
}

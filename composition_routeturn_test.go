package steadfast_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/mock"
)

// fallback(retry(a), retry(b)) with a answering 503 every time: the call
// reaches a twice (one retry, one backoff of 1 s), then b answers; with a
// Retry-After of 200 ms on a's 503s, a is retried all four times, as the
// provider pacing a call is (#71).
func TestAFallbackMovesOnAfterOneRetryOnABrokenRoute(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after time.Duration
		calls int
		took  time.Duration
	}{
		{"503s", 0, 2, time.Second},
		{"503s with a short Retry-After", 200 * time.Millisecond, 4, 600 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, b := mock.New(mock.Fail(&providerError{code: 503, after: tc.after})), mock.New(mock.OK("from b"))
				r, err := fallback.New([]core.Runnable{newRetryQuiet(t, a), newRetryQuiet(t, b)})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				out, err := r.Invoke(t.Context(), "q")
				if err != nil || out != "from b" || a.CallCount() != tc.calls || time.Since(start) != tc.took {
					t.Errorf("Invoke() = %v, %v after %d calls to a in %v, want b's answer after %d in %v", out, err, a.CallCount(), time.Since(start), tc.calls, tc.took)
				}
			})
		})
	}
}

package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

// Every attempt of one call sees one core.State; another call sees
// another; a call made with core.WithState keeps the State it was given,
// as does an inner retry layer's call within an outer one's attempt.
func TestEachCallHasOneState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []*core.State
		inner := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
			seen = append(seen, core.StateFrom(ctx))
			if len(seen)%2 == 1 {
				return nil, errors.New("flaky") // each call's first attempt fails
			}
			return "ok", nil
		})
		cfg := retry.RetryConfig{MaxRetries: 1, InitialBackoff: time.Second, MaxBackoff: time.Second}
		quiet := []retry.Option{retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider())}
		r, err := retry.New(inner, cfg, quiet...)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := r.Invoke(t.Context(), "q"); err != nil {
				t.Fatal(err)
			}
		}
		given := new(core.State)
		if _, err := r.Invoke(core.WithState(t.Context(), given), "q"); err != nil {
			t.Fatal(err)
		}
		outer, err := retry.New(r, cfg, quiet...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := outer.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		if len(seen) != 8 || seen[0] == nil {
			t.Fatalf("states seen = %v, want 8, none nil", seen)
		}
		if seen[0] != seen[1] || seen[2] != seen[3] {
			t.Error("the attempts of one call see different States")
		}
		if seen[0] == seen[2] {
			t.Error("two calls share a State")
		}
		if seen[4] != given || seen[5] != given {
			t.Error("a call made with core.WithState did not keep the State it was given")
		}
		if seen[6] != seen[7] || seen[6] == seen[0] || seen[6] == given {
			t.Error("an inner retry layer's call within an outer one's does not share the outer call's State")
		}
	})
}

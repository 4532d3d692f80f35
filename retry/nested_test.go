package retry_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

// nestedConfig retries twice with a short backoff.
func nestedConfig(nested string) retry.RetryConfig {
	return retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Nested: nested}
}

// A RetryRunnable inside another's attempt makes one attempt by default:
// three layers of two retries each make three requests, the outermost
// layer's attempts, not 27; its failure is classified by the outer layer
// as the attempt's own error. With Nested "retry" every layer retries.
func TestNestedCallsMakeOneAttempt(t *testing.T) {
	for _, tc := range []struct {
		nested string
		want   int
	}{{"", 3}, {"once", 3}, {"retry", 27}} {
		t.Run("nested="+tc.nested, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := mock.New(mock.Fail(errTransient))
				var r core.Runnable = inner
				for range 3 {
					r = newRetry(t, r, nestedConfig(tc.nested))
				}
				_, err := r.Invoke(t.Context(), "q")
				if n := inner.CallCount(); n != tc.want {
					t.Errorf("%d requests, want %d", n, tc.want)
				}
				re := wantOutcome(t, err, retry.OutcomeExhausted, 3)
				if !errors.Is(re, errTransient) {
					t.Errorf("error %v, want the attempt's error reachable", err)
				}
			})
		})
	}
}

// A nested call's failure keeps its classification: a permanent one stops
// the outer layer at once, a transient one is retried there.
func TestNestedFailureIsClassifiedByTheOuterLayer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Fail(retry.Permanent(errTransient)))
		outer := newRetry(t, newRetry(t, inner, nestedConfig("")), nestedConfig(""))
		_, err := outer.Invoke(t.Context(), "q")
		wantOutcome(t, err, retry.OutcomeNotRetryable, 1)
		if n := inner.CallCount(); n != 1 {
			t.Errorf("%d requests for a permanent failure, want 1", n)
		}
		flaky := mock.New(mock.Fail(errTransient), mock.OK("a"))
		outer = newRetry(t, newRetry(t, flaky, nestedConfig("")), nestedConfig(""))
		if out, err := outer.Invoke(t.Context(), "q"); err != nil || out != "a" || flaky.CallCount() != 2 {
			t.Errorf("Invoke() = %v, %v after %d requests, want a after 2", out, err, flaky.CallCount())
		}
	})
}

// A nested call reports MaxAttempts 1 to what it calls, and its span
// carries retry.nested, the depth; the outermost's carries none.
func TestNestedCallsSayTheirDepth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		var info retry.AttemptInfo
		leaf := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
			info, _ = retry.AttemptFromContext(ctx)
			return "a", nil
		})
		var r core.Runnable = leaf
		for range 3 {
			var err error
			if r, err = retry.New(r, nestedConfig(""), rec.options()...); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		if info.MaxAttempts != 1 {
			t.Errorf("the innermost attempt's MaxAttempts = %d, want 1", info.MaxAttempts)
		}
		spans := rec.ended("retry.invoke") // innermost first
		if len(spans) != 3 {
			t.Fatalf("%d call spans, want 3", len(spans))
		}
		wantAttrs(t, "innermost", spans[0].Attributes(), map[string]string{"retry.nested": "2"})
		wantAttrs(t, "middle", spans[1].Attributes(), map[string]string{"retry.nested": "1"})
		wantAttrs(t, "outermost", spans[2].Attributes(), nil, "retry.nested")
	})
}

// A nested Stream that fails before its first chunk makes one attempt
// too; the outer layer's retry delivers the stream.
func TestNestedStreamMakesOneAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.New(mock.Fail(errTransient), mock.Fail(errTransient), mock.Stream(nil, "a", "b"))
		outer := newRetry(t, newRetry(t, inner, nestedConfig("")), nestedConfig(""))
		ch, err := outer.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for v := range ch {
			if e, ok := v.(error); ok {
				t.Fatalf("stream failed: %v", e)
			}
			got = append(got, v.(string))
		}
		if strings.Join(got, "") != "ab" || inner.CallCount() != 3 {
			t.Errorf("stream %q after %d requests, want ab after 3", got, inner.CallCount())
		}
	})
}

// Nested takes "once", "retry" or "" and nothing else, in Go and JSON.
func TestNestedRejectsOtherValues(t *testing.T) {
	_, err := retry.New(mock.New(), retry.RetryConfig{Nested: "twice"}, quiet...)
	if err == nil || !strings.Contains(err.Error(), "Nested") {
		t.Errorf("New() with Nested \"twice\" = %v, want an error naming Nested", err)
	}
	var cfg retry.RetryConfig
	if err := json.Unmarshal([]byte(`{"nested": "retry"}`), &cfg); err != nil || cfg.Nested != "retry" {
		t.Errorf(`{"nested": "retry"} gave %q, %v`, cfg.Nested, err)
	}
	if err := json.Unmarshal([]byte(`{"nested": 1}`), &cfg); err == nil || !strings.Contains(err.Error(), "Nested") {
		t.Errorf(`{"nested": 1} gave %v, want an error naming Nested`, err)
	}
}

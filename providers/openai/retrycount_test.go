package openai_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3/option"

	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// roundTrip is an http.RoundTripper that is a function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Each attempt tells the server how many sends came before it, as
// openai-go does when it retries itself (0, 1, 2), counted across a retry
// layer nested in another; a value the caller set is kept.
func TestEachAttemptSaysItsRetryCount(t *testing.T) {
	for _, tc := range []struct {
		name   string
		nested bool
		header string
		want   []string
	}{
		{"one layer", false, "", []string{"0", "1", "2"}},
		{"a layer nested in another", true, "", []string{"0", "1", "2"}},
		{"the caller's own value", false, "7", []string{"7", "7", "7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var got []string
				api := roundTrip(func(req *http.Request) (*http.Response, error) {
					mu.Lock()
					got = append(got, req.Header.Get("X-Stainless-Retry-Count"))
					n := len(got)
					mu.Unlock()
					status, body := 503, `{"error":{"message":"overloaded","type":"server_error"}}`
					if n == 3 {
						status, body = 200, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`
					}
					return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
						Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
				})
				opts := []option.RequestOption{option.WithBaseURL("http://api.test/v1/"), option.WithAPIKey("key"),
					option.WithHTTPClient(&http.Client{Transport: api})}
				if tc.header != "" {
					opts = append(opts, option.WithHeader("X-Stainless-Retry-Count", tc.header))
				}
				cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Second}
				r, err := retry.New(openai.NewChat("m", opts...), cfg)
				if err != nil {
					t.Fatal(err)
				}
				call := r.Invoke
				if tc.nested {
					o, err := retry.New(r, cfg)
					if err != nil {
						t.Fatal(err)
					}
					call = o.Invoke
				}
				if _, err := call(t.Context(), "q"); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("X-Stainless-Retry-Count %q, want %q", got, tc.want)
				}
			})
		})
	}
}

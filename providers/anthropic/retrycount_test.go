package anthropic_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/steadfast-go/steadfast/providers/anthropic"
	"github.com/steadfast-go/steadfast/retry"
)

// roundTrip is an http.RoundTripper that is a function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Each attempt tells the server how many sends came before it, as
// anthropic-sdk-go does when it retries itself (0, 1, 2), counted across a retry
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
					status, body := 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
					if n == 3 {
						status, body = 200, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`
					}
					return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
						Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
				})
				opts := []option.RequestOption{option.WithBaseURL("http://api.test"), option.WithAPIKey("key"),
					option.WithHTTPClient(&http.Client{Transport: api})}
				if tc.header != "" {
					opts = append(opts, option.WithHeader("X-Stainless-Retry-Count", tc.header))
				}
				cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Second}
				r, err := retry.New(anthropic.NewMessages("m", opts...), cfg)
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

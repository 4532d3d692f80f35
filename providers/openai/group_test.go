package openai_test

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3/option"

	"github.com/steadfast-go/steadfast/internal/llmhttptest"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// Issue #42's quota groups, through the real client: three keys in two
// groups (two keys of one organisation, one of another). The first
// request to organisation a's keys meets a 429 with Retry-After 2 s; the
// next calls go to organisation b, and nothing is sent to a's keys before
// the 2 s are up.
func TestQuotaGroupsThroughTheClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		sent := map[string][]time.Duration{}
		limited := false
		key := func(name, group string) pool.Deployment {
			srv := llmhttptest.NewFunc(func(*http.Request, string) llmhttptest.Reply {
				mu.Lock()
				defer mu.Unlock()
				sent[name] = append(sent[name], time.Since(start))
				if group == "org-a" && !limited {
					limited = true
					return llmhttptest.JSON(429, `{"error":{"message":"Rate limit reached for gpt-4o in organization org-a on requests per min (RPM): Limit 500, Used 500, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, "retry-after", "2")
				}
				return completion(name)
			})
			return pool.Deployment{Name: name, Group: group, Runnable: openai.NewChat(model, option.WithAPIKey(name),
				option.WithBaseURL("http://openai.test/v1/"), option.WithHTTPClient(srv.Client()))}
		}
		p, err := pool.New([]pool.Deployment{key("a1", "org-a"), key("a2", "org-a"), key("b", "org-b")})
		if err != nil {
			t.Fatal(err)
		}
		r, err := retry.New(p, llmhttptest.Config)
		if err != nil {
			t.Fatal(err)
		}
		var hit time.Duration = -1
		for i := range 40 {
			at := time.Since(start)
			out, err := r.Invoke(t.Context(), "q")
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			mu.Lock()
			if hit < 0 && limited {
				hit = at
				if openai.Text(out) != "b" || time.Since(start)-at > time.Nanosecond {
					t.Errorf("the call that met the 429 = %q after %v; want b's answer at once", openai.Text(out), time.Since(start)-at)
				}
			}
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
		}
		if hit < 0 {
			t.Fatal("no call went to organisation a")
		}
		for _, name := range []string{"a1", "a2"} {
			for _, at := range sent[name] {
				if at > hit && at < hit+2*time.Second {
					t.Errorf("%s was sent a request %v after its group's 429; want none before 2s", name, at-hit)
				}
			}
		}
		if len(sent["a1"])+len(sent["a2"]) < 2 {
			t.Errorf("organisation a was sent %d requests; want it back after 2s", len(sent["a1"])+len(sent["a2"]))
		}
	})
}

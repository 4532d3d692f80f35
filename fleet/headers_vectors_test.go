package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// paceVector is one scenario of llmhttp/testdata/pace (see its README):
// the specification the headers script shares with the Go pacer.
type paceVector struct {
	Doc   string `json:"doc"`
	Steps []struct {
		At     int64 `json:"at"`
		Answer *struct {
			Requests *paceLimit `json:"requests"`
			Tokens   *paceLimit `json:"tokens"`
		} `json:"answer"`
		Call *int  `json:"call"`
		Wait int64 `json:"wait"`
	} `json:"steps"`
}

type paceLimit struct {
	Limit     int64 `json:"limit"`
	Remaining int64 `json:"remaining"`
	Reset     int64 `json:"reset"`
}

func (l paceLimit) at(t time.Time) llmhttp.Limit {
	return llmhttp.Limit{Known: true, Limit: l.Limit, Remaining: l.Remaining, Reset: t.Add(time.Duration(l.Reset) * time.Millisecond)}
}

// The headers script passes every vector of the specification it shares
// with the Go pacer (internal/pace), against a real redis-server, on the
// vectors' clock.
func TestHeadersScriptVectors(t *testing.T) {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("REDIS_ADDR is not set: the fleet tests need Redis (.ci/run starts one)")
		}
		t.Skip("REDIS_ADDR is not set: the fleet tests need Redis. Start one and run REDIS_ADDR=localhost:6390 go test ./... in fleet/, or run .ci/run")
	}
	rc := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer rc.Close()
	files, err := filepath.Glob("../llmhttp/testdata/pace/*.json")
	if err != nil || len(files) < 10 {
		t.Fatalf("vectors: %v, %v; want the specification's files", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var v paceVector
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var b [6]byte
			_, _ = rand.Read(b[:])
			key := "steadfast:test:vectors:" + hex.EncodeToString(b[:])
			defer rc.Del(context.Background(), key)
			base := time.Unix(1_000_000, 0)
			var last llmhttp.RateLimits
			for i, s := range v.Steps {
				at := base.Add(time.Duration(s.At) * time.Millisecond)
				switch {
				case s.Answer != nil:
					// Each answer its own identity, as each response is.
					last = llmhttp.RateLimits{At: at.Add(time.Duration(i))}
					if s.Answer.Requests != nil {
						last.Requests = s.Answer.Requests.at(at)
					}
					if s.Answer.Tokens != nil {
						last.Tokens = s.Answer.Tokens.at(at)
					}
				case s.Call != nil:
					args := append(headerArgs(last, *s.Call, at), strconv.FormatInt(at.UnixMilli(), 10))
					res, err := headers.Run(t.Context(), rc, []string{key}, args...).Text()
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					got, _ := strconv.ParseFloat(res, 64)
					if want := float64(s.Wait); got != want {
						t.Errorf("step %d (at %d ms, %d tokens): wait %v ms, want %v ms\n%s", i, s.At, *s.Call, got, want, v.Doc)
					}
				default:
					t.Fatalf("step %d is neither an answer nor a call", i)
				}
			}
		})
	}
}

package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"testing"
	"time"

	"github.com/steadfast-go/steadfast/internal/pace/pacevec"
	"github.com/steadfast-go/steadfast/llmhttp"
)

// The headers script passes every vector of the specification it shares
// with the Go pacer (internal/pace), against a real redis-server, on the
// vectors' clock.
func TestHeadersScriptVectors(t *testing.T) {
	rc := testRedis(t)
	vectors, err := pacevec.Load("../llmhttp/testdata/pace", time.Unix(1_000_000, 0))
	if err != nil || len(vectors) < 10 {
		t.Fatalf("vectors: %d, %v; want the specification's", len(vectors), err)
	}
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			var b [6]byte
			_, _ = rand.Read(b[:])
			key := "steadfast:test:vectors:" + hex.EncodeToString(b[:])
			defer rc.Del(context.Background(), key)
			var last llmhttp.RateLimits
			for i, s := range v.Steps {
				if s.Answer != nil {
					last = *s.Answer
					continue
				}
				args := append(headerArgs(last, *s.Call, s.At), strconv.FormatInt(s.At.UnixMilli(), 10))
				res, err := headers.Run(t.Context(), rc, []string{key}, args...).Text()
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				got, _ := strconv.ParseFloat(res, 64)
				if want := float64(s.Wait.Milliseconds()); got != want {
					t.Errorf("step %d (%d tokens): wait %v ms, want %v ms\n%s", i, *s.Call, got, want, v.Doc)
				}
			}
		})
	}
}

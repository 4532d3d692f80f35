package pace_test

import (
	"testing"
	"time"

	"github.com/steadfast-go/steadfast/internal/pace"
	"github.com/steadfast-go/steadfast/internal/pace/pacevec"
	"github.com/steadfast-go/steadfast/llmhttp"
)

// lastAnswer is the pace.Source of a vector: the last answer received.
type lastAnswer struct {
	r  llmhttp.RateLimits
	ok bool
}

func (l *lastAnswer) RateLimits() (llmhttp.RateLimits, bool) { return l.r, l.ok }

// The Go pacer passes every vector of the specification it shares with
// the fleet module's Redis script.
func TestPaceVectors(t *testing.T) {
	vectors, err := pacevec.Load("../../llmhttp/testdata/pace", time.Unix(1_000_000, 0))
	if err != nil || len(vectors) < 10 {
		t.Fatalf("vectors: %d, %v; want the specification's", len(vectors), err)
	}
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			src := &lastAnswer{}
			p := pace.New(src)
			for i, s := range v.Steps {
				if s.Answer != nil {
					src.r, src.ok = *s.Answer, true
					continue
				}
				if got := p.Reserve(s.At, *s.Call).Delay; got != s.Wait {
					t.Errorf("step %d (%d tokens): wait %v, want %v\n%s", i, *s.Call, got, s.Wait, v.Doc)
				}
			}
		})
	}
}

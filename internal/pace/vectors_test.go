package pace_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/steadfast-go/steadfast/internal/pace"
	"github.com/steadfast-go/steadfast/llmhttp"
)

// vectorLimit is one limit of a vector's answer.
type vectorLimit struct {
	Limit     int64 `json:"limit"`
	Remaining int64 `json:"remaining"`
	Reset     int64 `json:"reset"` // ms from the answer's receipt
}

// vector is one scenario of llmhttp/testdata/pace (see its README).
type vector struct {
	Doc   string `json:"doc"`
	Steps []struct {
		At     int64 `json:"at"`
		Answer *struct {
			Requests *vectorLimit `json:"requests"`
			Tokens   *vectorLimit `json:"tokens"`
		} `json:"answer"`
		Call *int  `json:"call"`
		Wait int64 `json:"wait"`
	} `json:"steps"`
}

// lastAnswer is the RateLimited of a vector: the last answer received.
type lastAnswer struct {
	r  llmhttp.RateLimits
	ok bool
}

func (l *lastAnswer) RateLimits() (llmhttp.RateLimits, bool) { return l.r, l.ok }

func (v vectorLimit) limit(at time.Time) llmhttp.Limit {
	return llmhttp.Limit{Known: true, Limit: v.Limit, Remaining: v.Remaining, Reset: at.Add(time.Duration(v.Reset) * time.Millisecond)}
}

// The Go pacer passes every vector of the specification it shares with
// the fleet module's Redis script.
func TestPaceVectors(t *testing.T) {
	files, err := filepath.Glob("../../llmhttp/testdata/pace/*.json")
	if err != nil || len(files) < 10 {
		t.Fatalf("vectors: %v, %v; want the specification's files", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var v vector
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			base := time.Unix(1_000_000, 0)
			src := &lastAnswer{}
			p := pace.New(src)
			for i, s := range v.Steps {
				at := base.Add(time.Duration(s.At) * time.Millisecond)
				switch {
				case s.Answer != nil:
					src.r, src.ok = llmhttp.RateLimits{At: at}, true
					if s.Answer.Requests != nil {
						src.r.Requests = s.Answer.Requests.limit(at)
					}
					if s.Answer.Tokens != nil {
						src.r.Tokens = s.Answer.Tokens.limit(at)
					}
				case s.Call != nil:
					want := time.Duration(s.Wait) * time.Millisecond
					if got := p.Reserve(at, *s.Call); got != want {
						t.Errorf("step %d (at %d ms, %d tokens): wait %v, want %v\n%s", i, s.At, *s.Call, got, want, v.Doc)
					}
				default:
					t.Fatalf("step %d is neither an answer nor a call", i)
				}
			}
		})
	}
}

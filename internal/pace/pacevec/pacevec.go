// Package pacevec reads the vectors of llmhttp/testdata/pace, the one
// specification of header pacing, for the tests of the Go pacer
// (internal/pace) and of the fleet module's Redis script.
package pacevec

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// Vector is one scenario: its name, what it shows, and its steps.
type Vector struct {
	Name, Doc string
	Steps     []Step
}

// Step is an answer received (Answer set) or a call (Call set).
type Step struct {
	At time.Time
	// Answer is what a response received at At said; each answer has an
	// At of its own (At plus its step's index in nanoseconds), as each
	// response has an identity.
	Answer *llmhttp.RateLimits
	// Call is the call's tokens (0 when calls are not counted in tokens);
	// Wait is what it must be told.
	Call *int
	Wait time.Duration
}

type limit struct {
	Limit     int64 `json:"limit"`
	Remaining int64 `json:"remaining"`
	Reset     int64 `json:"reset"` // ms from the answer's receipt
}

type file struct {
	Doc   string `json:"doc"`
	Steps []struct {
		At     int64 `json:"at"`
		Answer *struct {
			Requests *limit `json:"requests"`
			Tokens   *limit `json:"tokens"`
		} `json:"answer"`
		Call *int  `json:"call"`
		Wait int64 `json:"wait"`
	} `json:"steps"`
}

// Load reads every vector in dir, its times counted from base.
func Load(dir string, base time.Time) ([]Vector, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Vector
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var f file
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		v := Vector{Name: filepath.Base(path), Doc: f.Doc}
		for i, s := range f.Steps {
			st := Step{At: base.Add(time.Duration(s.At) * time.Millisecond), Call: s.Call, Wait: time.Duration(s.Wait) * time.Millisecond}
			switch {
			case s.Answer != nil:
				r := llmhttp.RateLimits{At: st.At.Add(time.Duration(i))}
				if s.Answer.Requests != nil {
					r.Requests = s.Answer.Requests.at(st.At)
				}
				if s.Answer.Tokens != nil {
					r.Tokens = s.Answer.Tokens.at(st.At)
				}
				st.Answer = &r
			case s.Call == nil:
				return nil, fmt.Errorf("%s: step %d is neither an answer nor a call", path, i)
			}
			v.Steps = append(v.Steps, st)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no vectors in %s", dir)
	}
	return out, nil
}

func (l limit) at(t time.Time) llmhttp.Limit {
	return llmhttp.Limit{Known: true, Limit: l.Limit, Remaining: l.Remaining, Reset: t.Add(time.Duration(l.Reset) * time.Millisecond)}
}

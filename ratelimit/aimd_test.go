package ratelimit

import (
	"encoding/json"
	"os"
	"testing"
	"time"
)

// aimdVectors is testdata/aimd.json: the limit's arithmetic, which every
// store of a Concurrency's limit follows.
type aimdVectors struct {
	Cases []struct {
		Name  string
		Start struct {
			Limit, Min, Max float64
			Epoch           uint64
		}
		Steps []struct {
			Overload, Clean, Saturated bool
			HintMS                     int64 `json:"hint_ms"`
			TTFTMS                     int64 `json:"ttft_ms"`
			Cost, InFlight             float64
			Epoch                      uint64
			Repeat                     int
			Want                       struct {
				Limit float64
				Epoch uint64
				Step  float64
			}
		}
	}
}

func TestTheLimitFollowsTheVectors(t *testing.T) {
	data, err := os.ReadFile("testdata/aimd.json")
	if err != nil {
		t.Fatal(err)
	}
	var v aimdVectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			a := aimd{limit: c.Start.Limit, min: c.Start.Min, max: c.Start.Max, step: 1, epoch: c.Start.Epoch}
			for i, s := range c.Steps {
				for range max(s.Repeat, 1) {
					a.observe(outcome{overload: s.Overload, hint: time.Duration(s.HintMS) * time.Millisecond, clean: s.Clean,
						ttft: time.Duration(s.TTFTMS) * time.Millisecond, cost: s.Cost, epoch: s.Epoch, saturated: s.Saturated, inflight: s.InFlight})
				}
				if os.Getenv("AIMD_PRINT") != "" {
					t.Logf("step %d: limit %v, epoch %d, step %v", i, a.limit, a.epoch, a.step)
					continue
				}
				if a.limit != s.Want.Limit || a.epoch != s.Want.Epoch || a.step != s.Want.Step {
					t.Fatalf("step %d: limit %v, epoch %d, step %v; want %v, %d, %v", i, a.limit, a.epoch, a.step, s.Want.Limit, s.Want.Epoch, s.Want.Step)
				}
			}
		})
	}
}
